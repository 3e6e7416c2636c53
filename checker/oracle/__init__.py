"""The differential exactly-once oracle for any Kafka Streams app (docs/your-app.md): the
reference execution of the committed input (reference.py) and the per-key comparison of
the committed output with it (compare.py); the check itself is checker/checks/oracle.py."""
