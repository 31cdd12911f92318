"""The referee: pure geometry and rulesets in table inches.

Nothing here touches a camera or a web server: this package imports neither
``cv2`` nor ``flask``, so everything in it can be tested with numbers alone.
"""
