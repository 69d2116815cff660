"""pytest plugin (entry point `bmk`): the `cmdbuf_golden` fixture and `--bmk-update-golden`."""
