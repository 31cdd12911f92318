"""Setting up a table from a web page, no TOML to write: the steps
(:mod:`~tablesight.setup.steps`) and the session that drives them
(:mod:`~tablesight.setup.session`)."""
