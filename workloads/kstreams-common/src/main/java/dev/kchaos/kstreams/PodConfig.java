package dev.kchaos.kstreams;

import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The Kafka Streams settings of a pod from its flags, one copy for every tree (the names
 * used exist from 2.0 on). Settings as in KAFKA-20685's report: the guarantee, the commit
 * interval given, static membership (group.instance.id = pod name) where the release has
 * it, no record cache, persistent RocksDB stores with a small write buffer, the state
 * directory on the pod's volume. What differs by release the tree passes in; a tree adds
 * its own settings between shared() and overrides().
 */
final class PodConfig {
    private PodConfig() {}

    /**
     * `guarantee`: the processing.guarantee the release is given; `cacheConfig`: the name of
     * its record-cache size (statestore.cache.max.bytes from 3.4, cache.max.bytes.buffering
     * before); `instanceIdConfig`: group.instance.id, or null where the release has no
     * static membership (before 2.3).
     */
    static Properties shared(Flags f, String guarantee, String cacheConfig, String instanceIdConfig) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, f.get("application-id", "ledger-app"));
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, f.get("bootstrap", null));
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, f.integer("threads", 1));
        p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, f.integer("standbys", 0));
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, f.integer("commit-interval-ms", 500));
        p.put(StreamsConfig.STATE_DIR_CONFIG, f.get("state-dir", null));
        // Kafka Streams' cleaner runs every state.cleanup.delay.ms: one setting for both.
        p.put(StreamsConfig.STATE_CLEANUP_DELAY_MS_CONFIG, f.integer("cleaner-delay-ms", 600_000));
        p.put(cacheConfig, 0); // writes reach RocksDB at once
        p.put(StreamsConfig.ROCKSDB_CONFIG_SETTER_CLASS_CONFIG, SmallWriteBuffer.class.getName());
        p.put(SmallWriteBuffer.WRITE_BUFFER_BYTES, f.get("write-buffer-bytes", "65536"));
        if (f.has("write-buffer-count")) {  // else Kafka Streams' own (3 a store)
            p.put(SmallWriteBuffer.WRITE_BUFFER_COUNT, f.get("write-buffer-count", "3"));
        }
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        if (instanceIdConfig != null) {
            p.put(StreamsConfig.consumerPrefix(instanceIdConfig), f.get("instance-id", "pod-0"));
        }
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG),
              f.integer("session-timeout-ms", 10_000));
        // Passed by the harness only when drawn or set (faults/knobs.py); otherwise Kafka
        // Streams' own: a 10 s transaction timeout under exactly-once, 1000 records a poll.
        if (f.has("transaction-timeout-ms")) {
            p.put(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG),
                  f.integer("transaction-timeout-ms", 10_000));
        }
        if (f.has("max-poll-records")) {  // every consumer; the restore one may differ
            p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, f.integer("max-poll-records", 1000));
        }
        if (f.has("restore-max-poll-records")) {
            p.put(StreamsConfig.restoreConsumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG),
                  f.integer("restore-max-poll-records", 1000));
        }
        return p;
    }

    /** `--streams-config KEY=VALUE` (repeatable; Flags checked the shape), over every
     * other setting: call it last. */
    static Properties overrides(Properties p, Flags f) {
        for (String setting : f.streamsConfig) {
            int eq = setting.indexOf('=');
            p.put(setting.substring(0, eq), setting.substring(eq + 1));
        }
        return p;
    }
}
