"""TableSight: a webcam referee for miniature wargames.

The product installs under this one name. Its parts, lowest layer first (each imports
only the ones before it):

* :mod:`tablesight.rules`: pure geometry and rulesets in table inches (no camera, no web);
* :mod:`tablesight.calibration`: what the user describes in files (table, roster,
  terrain, camera, session script), validated once, and the printed targets;
* :mod:`tablesight.vision`: pixels to observations (sources, decoding, detection, the
  table pose, locating, tracking, observing, the doctor's look at a picture);
* :mod:`tablesight.match`: the game refereed live, the match file and its replay;
* :mod:`tablesight.tournament`: the MQTT link of a table and the tournament hub;
* :mod:`tablesight.setup`: the set-up page's session and its steps;
* :mod:`tablesight.webui`: the pages (HTTP to calls and back);
* :mod:`tablesight.cli`: the ``tablesight`` command line.

:mod:`tablesight.rig` (the synthetic camera, the footage generator, the benchmarks) sits
above them all; only the tests, ``samples/make.py`` and ``tablesight bench`` use it.

In the repository each part is a folder at the top (``rules/``, ``vision/``, ...) and this
package links to them; a wheel holds them as ``tablesight.rules``, ``tablesight.vision``,
and so on.
"""
