"""Batch codemods: apply many lazy edit snippets to files under a root, as a dry run or in place.

`manifest` reads the edits (JSON Lines or an update folder) and keeps paths inside the root,
`runner` applies them (in-process `Applier` or a gRPC server) under the write rules, `report`
draws the progress, the final table and the JSON report, `cli` is `fastapply codemod`.
"""
