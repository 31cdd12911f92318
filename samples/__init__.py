"""The sample matches, installed with TableSight as the package ``tablesight_samples`` so
that ``tablesight demo`` plays them outside a checkout: one folder per game."""
