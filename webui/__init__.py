"""The Flask web apps: the table view, the broadcast pages for OBS and the replay viewer
(one protocol, :mod:`tablesight.webui.protocol`), the set-up page (``setup.py``) and the
tournament hub (``hub.py``)."""
