"""A user's Kafka Streams app as a run's workload (docs/your-app.md): its input spec
(spec.py), the input it sends (traffic.py), how its jars are had (build.py)."""
