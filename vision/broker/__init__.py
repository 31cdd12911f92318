"""The tournament link: each table's referee published to an MQTT broker, and the hub that
reads every table from it and sends the judges' decisions back (``docs/hub.md``).

* :mod:`vision.broker.link`: where the broker is and how to log in (``--broker`` and its
  options), and a paho-mqtt client made from that.
* :mod:`vision.broker.messages`: the topic tree and every message's format, versioned.
* :mod:`vision.broker.publisher`: a table's game published (``run`` and ``demo``).
* :mod:`vision.broker.hub`: every table's state as the broker tells it (``hub``).
"""
