"""fastapply language server: `fastapply-lsp` (see `lsp.server`); minimal edits in `lsp.edits`."""
