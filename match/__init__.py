"""A match: the game refereed live from a source (:mod:`~tablesight.match.game`), the match
file it records (:mod:`~tablesight.match.schema`, :mod:`~tablesight.match.writer`,
:mod:`~tablesight.match.reader`), its replay and its export."""
