"""The local Kafka cluster: jars from Maven Central, KRaft brokers as processes."""
