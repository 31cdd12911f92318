"""The Flask web app: table view, broadcast pages for OBS and the replay viewer."""
