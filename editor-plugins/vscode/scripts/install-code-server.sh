#!/usr/bin/env sh
# A real VS Code for the extension's end-to-end test (tests/test_editor_vscode_real.py), from npm
# alone: code-server 4.100.3 bundles VS Code 1.100.3 (its server build and web workbench) and runs
# on node 20. Its own postinstall fetches ripgrep and prebuilt binaries from GitHub; this script
# does the same steps offline from GitHub: native modules are compiled (node-gyp, with the node
# headers installed), ripgrep is Debian's.
#
#   apt-get install chromium-headless-shell libkrb5-dev ripgrep build-essential
#   sh editor-plugins/vscode/scripts/install-code-server.sh [DIR]      (default .venv/code-server)
set -eu

VERSION=4.100.3
DIR=${1:-.venv/code-server}
[ "$(node -p 'process.versions.node.split(".")[0]')" = 20 ] || { echo "code-server $VERSION needs node 20" >&2; exit 1; }
RG=$(command -v rg) || { echo "ripgrep is missing: apt-get install ripgrep" >&2; exit 1; }

mkdir -p "$DIR" && cd "$DIR"
[ -f package.json ] || echo '{"private": true}' > package.json
npm install --no-audit --no-fund --ignore-scripts "code-server@$VERSION"
npm rebuild argon2 --foreground-scripts
cd node_modules/code-server/lib/vscode
npm install --omit=dev --ignore-scripts --no-audit --no-fund
# @vscode/ripgrep's postinstall downloads rg unless bin/ exists
mkdir -p node_modules/@vscode/ripgrep/bin && ln -sf "$RG" node_modules/@vscode/ripgrep/bin/rg
# node-pty builds through `npx node-gyp`: let npx run it without asking
npm_config_yes=true npm rebuild --foreground-scripts
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
(cd extensions && npm install --omit=dev --no-audit --no-fund)
echo "code-server $VERSION installed: $(cd ../../../.. && pwd)/node_modules/.bin/code-server"
