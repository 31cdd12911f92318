"""The test rig: the synthetic camera, the footage generator, scripted tables and the
benchmarks. The product never imports it; the tests, ``samples/make.py`` and
``tablesight bench`` do."""
