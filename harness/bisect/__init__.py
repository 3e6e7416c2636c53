"""`kchaos bisect`: which Kafka Streams release first stops reproducing a failing run."""
