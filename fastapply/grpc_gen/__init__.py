"""Generated protobuf/gRPC code for proto/fastapply/v1/fastapply.proto (do not edit by hand).

Regenerate with `python -m fastapply.grpc_gen.regen`; a test fails when these files are stale.
"""
