package dev.kchaos.kstreams;

import static dev.kchaos.kstreams.AppLauncher.*;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;

/**
 * `AppLauncher reference`: the app's topology in Kafka's TopologyTestDriver, fed a JSONL file
 * of input records in file order, its output records written to another
 * (checker/oracle/reference.py runs it twice, in two orders).
 */
final class ReferenceRun {
    private ReferenceRun() {}

    static void reference(String[] args) throws Refused, IOException, InterruptedException {
        List<String> configs = new ArrayList<>();
        List<String> appArgs = new ArrayList<>();
        Map<String, String> opts = options(
            args, Set.of("input", "output", "wall-clock-step-ms"), configs, appArgs);
        AppEntry entry = entry(opts, appArgs);
        for (String required : List.of("input", "output")) {
            if (!opts.containsKey(required)) {
                throw new Refused("reference wants --" + required + ": " + USAGE);
            }
        }
        long step;
        try {
            step = Long.parseLong(opts.getOrDefault("wall-clock-step-ms", "0"));
        } catch (NumberFormatException e) {
            throw new Refused("--wall-clock-step-ms wants milliseconds, got " + opts.get("wall-clock-step-ms"));
        }
        quietLogs();
        Path stateDir = temporary(referenceStateDir());
        try {
            AppEntry.Captured captured = capture(entry, "kchaos-reference", stateDir, configs,
                                                 Capture.Mode.REFERENCE);
            Topology topology = captured.topology();
            Reference run = new Reference(topology, captured.config(),
                                          TopologyShape.of(topology.describe()), step);
            long started = System.nanoTime();
            run.feed(Path.of(opts.get("input")), Path.of(opts.get("output")));
            Map<String, Object> summary = new LinkedHashMap<>();
            summary.put("records_in", run.recordsIn);
            summary.put("records_skipped", run.recordsSkipped);
            summary.put("records_out", run.recordsOut);
            summary.put("seconds", Math.round((System.nanoTime() - started) / 1e6) / 1e3);
            summary.put("skipped_topics", run.skippedTopics);
            System.out.println(JSON.writeValueAsString(summary));
        } finally {
            deleteTree(stateDir);
        }
    }

    /**
     * The reference's temporary state dir: in /dev/shm when it has room. The driver commits
     * after every record, and a commit writes each store's checkpoint file and flushes each
     * RocksDB store to a new file, both synced: ~10 ms a record on a disk, ~2 ms in memory.
     */
    static Path referenceStateDir() throws IOException {
        Path shm = Path.of("/dev/shm");
        try {
            if (Files.isDirectory(shm) && Files.isWritable(shm)
                    && Files.getFileStore(shm).getUsableSpace() >= (1L << 30)) {
                return Files.createTempDirectory(shm, "kchaos-reference-");
            }
        } catch (IOException | SecurityException e) {
            // the OS's temporary folder, then
        }
        return Files.createTempDirectory("kchaos-reference-");
    }

    /** One reference run: IN's records into a TopologyTestDriver, its output to OUT. */
    static final class Reference {
        private final Topology topology;
        private final Properties config;
        private final TopologyShape shape;
        private final long stepMs;
        private final String internalPrefix;
        private final ByteArraySerializer serializer = new ByteArraySerializer();
        private final ByteArrayDeserializer deserializer = new ByteArrayDeserializer();
        private final Map<String, Boolean> readable = new HashMap<>();
        private final Map<String, TestInputTopic<byte[], byte[]>> inputs = new HashMap<>();
        private final Map<String, TestOutputTopic<byte[], byte[]>> outputs = new HashMap<>();
        private final Map<String, Long> seq = new HashMap<>();
        private final SortedSet<String> produced = new TreeSet<>();
        private TopologyTestDriver driver;
        long recordsIn;
        long recordsSkipped;
        long recordsOut;
        final SortedSet<String> skippedTopics = new TreeSet<>();

        Reference(Topology topology, Properties config, TopologyShape shape, long stepMs) {
            this.topology = topology;
            this.config = config;
            this.shape = shape;
            this.stepMs = stepMs;
            this.internalPrefix = config.getProperty(StreamsConfig.APPLICATION_ID_CONFIG) + "-";
        }

        void feed(Path in, Path out) throws Refused, IOException {
            try (BufferedReader reader = Files.newBufferedReader(in, StandardCharsets.UTF_8);
                 BufferedWriter writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
                long index = -1;
                String line;
                while ((line = reader.readLine()) != null) {
                    index++;
                    if (line.isBlank()) {
                        continue;
                    }
                    JsonNode record;
                    String topic;
                    long timestamp;
                    byte[] key;
                    byte[] value;
                    try {
                        record = JSON.readTree(line);
                        topic = record.get("topic").asText();
                        timestamp = record.get("timestamp").asLong();
                        key = bytes(record.get("key"));
                        value = bytes(record.get("value"));
                    } catch (Exception e) {
                        throw new Refused(in + " line " + (index + 1) + " is not a record "
                                          + "{topic, partition, offset, timestamp, key, value}: " + e);
                    }
                    recordsIn++;
                    if (!readable.computeIfAbsent(topic, shape::reads)) {
                        recordsSkipped++;
                        skippedTopics.add(topic);
                        continue;
                    }
                    if (driver == null) {  // wall-clock time starts at the first record's
                        driver = new TopologyTestDriver(topology, config, Instant.ofEpochMilli(timestamp));
                    }
                    try {
                        inputs.computeIfAbsent(topic, t -> driver.createInputTopic(t, serializer, serializer))
                            .pipeInput(new TestRecord<>(key, value, new RecordHeaders(),
                                                        Instant.ofEpochMilli(timestamp)));
                        if (stepMs > 0) {
                            driver.advanceWallClockTime(Duration.ofMillis(stepMs));
                        }
                    } catch (RuntimeException e) {
                        closeQuietly();
                        writer.flush();
                        throw new Refused(in + " line " + (index + 1) + " (input_index " + index
                                          + ", topic " + topic + " partition " + record.path("partition").asText("?")
                                          + " offset " + record.path("offset").asText("?")
                                          + ") threw in the topology: " + explain(e), 3);
                    }
                    drain(writer, index);
                }
            } finally {
                closeQuietly();
            }
        }

        private static byte[] bytes(JsonNode node) {
            return node == null || node.isNull() ? null : Base64.getDecoder().decode(node.asText());
        }

        /** Every topic written so far is read out, the outputs' records written to OUT (the
         * rest dropped: the driver would keep changelog and repartition records forever). */
        private void drain(BufferedWriter writer, long index) throws IOException {
            Set<String> now = driver.producedTopicNames();
            if (now.size() != produced.size()) {
                produced.addAll(now);
            }
            for (String topic : produced) {
                TestOutputTopic<byte[], byte[]> queue = outputs.computeIfAbsent(
                    topic, t -> driver.createOutputTopic(t, deserializer, deserializer));
                if (queue.isEmpty()) {
                    continue;
                }
                List<TestRecord<byte[], byte[]>> records = queue.readRecordsToList();
                if (!isOutput(topic)) {
                    continue;
                }
                for (TestRecord<byte[], byte[]> r : records) {
                    long n = seq.merge(topic, 1L, Long::sum) - 1;
                    Map<String, Object> line = new LinkedHashMap<>();
                    line.put("topic", topic);
                    line.put("key", r.key() == null ? null : Base64.getEncoder().encodeToString(r.key()));
                    line.put("value", r.value() == null ? null : Base64.getEncoder().encodeToString(r.value()));
                    line.put("timestamp", r.timestamp());
                    line.put("input_index", index);
                    line.put("seq", n);
                    writer.write(JSON.writeValueAsString(line));
                    writer.write('\n');
                    recordsOut++;
                }
            }
        }

        /** A fixed sink, or with a TopicNameExtractor any topic that is not one of Kafka
         * Streams' own (changelog, repartition: prefixed with the application id) and not
         * read back by the topology. */
        private boolean isOutput(String topic) {
            if (shape.sinks.contains(topic)) {
                return true;
            }
            return shape.dynamicSinks && !topic.startsWith(internalPrefix)
                && !shape.internal.contains(topic) && !shape.reads(topic);
        }

        private void closeQuietly() {
            if (driver != null) {
                try {
                    driver.close();
                } catch (RuntimeException e) {
                    System.err.println("closing the TopologyTestDriver: " + e);
                }
                driver = null;
            }
        }
    }
}
