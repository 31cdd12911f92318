"""The tournament link: each table's referee published to an MQTT broker, and the hub that
reads every table from it and sends the judges' decisions back (``docs/hub.md``).

* :mod:`tablesight.tournament.link`: where the broker is and how to log in (``--broker`` and its
  options), and a paho-mqtt client made from that.
* :mod:`tablesight.tournament.messages`: the topic tree and every message's format, versioned.
* :mod:`tablesight.tournament.publisher`: a table's game published (``run`` and ``demo``).
* :mod:`tablesight.tournament.hub`: every table's state as the broker tells it (``hub``).
"""
