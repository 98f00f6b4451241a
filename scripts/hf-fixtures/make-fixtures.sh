#!/usr/bin/env bash
# Regenerates test/models/chat/fixtures/ (see make_fixtures.py). Needs a Python 3.10+ and the wheels
# of tokenizers, transformers and jinja2 (this machine keeps them in /opt/pypi/files; elsewhere pip
# fetches them). The virtual environment lives outside the repository.
set -euo pipefail
cd "$(dirname "$0")"
venv="${HF_FIXTURES_VENV:-/tmp/turnwise-hf-fixtures}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  if [ -d /opt/pypi/files ]; then
    "$venv/bin/pip" install -q --no-index --find-links /opt/pypi/files tokenizers transformers jinja2
  else
    "$venv/bin/pip" install -q tokenizers transformers jinja2
  fi
fi
"$venv/bin/python" make_fixtures.py
