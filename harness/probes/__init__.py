"""Probes: small deterministic programs that show one behaviour of Kafka itself, without
a streams app, so a finding can be tried on each broker release in a minute
(docs/findings/). They use the harness's cluster; the worker and the checker know nothing
of them."""
