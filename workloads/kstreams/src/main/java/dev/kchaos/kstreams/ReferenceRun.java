package dev.kchaos.kstreams;

import static dev.kchaos.kstreams.AppLauncher.*;

import dev.kchaos.kstreams.ReferenceFeed.Fed;
import dev.kchaos.kstreams.ReferenceFeed.Source;
import java.io.BufferedWriter;
import java.io.IOException;
import java.lang.reflect.Field;
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
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyDescription;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;

/**
 * `AppLauncher reference`: the app's topology in Kafka's TopologyTestDriver, fed the input
 * partitions of a folder (ReferenceFeed), its output records written to a JSONL file
 * (checker/oracle/reference.py runs it twice, in two orders).
 *
 * One driver per task (ReferenceTasks), so that stream time is kept per task as the cluster
 * keeps it: a window without grace, a suppression, a join window close when the task's own
 * records pass them, not when another partition's did. `--order tasks-in-turn` runs the
 * tasks one after another, each to its end; `--order interleaved` runs them all at once, the
 * records of every partition merged by timestamp (state shared across tasks shows as a
 * difference). `--ties` orders records of equal timestamp by topic, `--wall-clock-step-ms`
 * advances a driver's wall clock after each record it gets.
 */
final class ReferenceRun {
    static final Set<String> ORDERS = Set.of("tasks-in-turn", "interleaved");
    static final Set<String> TIES = Set.of("ascending", "descending");
    static final Set<String> DRIVERS = Set.of("per-task", "one");

    private ReferenceRun() {}

    static void reference(String[] args) throws Refused, IOException, InterruptedException {
        List<String> configs = new ArrayList<>();
        List<String> appArgs = new ArrayList<>();
        Map<String, String> opts = options(
            args, Set.of("input", "output", "wall-clock-step-ms", "order", "ties", "drivers"),
            configs, appArgs);
        AppEntry entry = entry(opts, appArgs);
        for (String required : List.of("input", "output")) {
            if (!opts.containsKey(required)) {
                throw new Refused("reference wants --" + required + ": " + USAGE);
            }
        }
        String order = choice(opts, "order", ORDERS, "tasks-in-turn");
        String ties = choice(opts, "ties", TIES, "ascending");
        String drivers = choice(opts, "drivers", DRIVERS, "per-task");
        long step;
        try {
            step = Long.parseLong(opts.getOrDefault("wall-clock-step-ms", "0"));
        } catch (NumberFormatException e) {
            throw new Refused("--wall-clock-step-ms wants milliseconds, got " + opts.get("wall-clock-step-ms"));
        }
        List<Source> sources = ReferenceFeed.sources(Path.of(opts.get("input")));
        quietLogs();
        Path stateDir = temporary(referenceStateDir());
        try {
            AppEntry.Captured captured = capture(entry, "kchaos-reference", stateDir, configs,
                                                 Capture.Mode.REFERENCE);
            Topology topology = captured.topology();
            TopologyDescription description = topology.describe();
            TopologyShape shape = TopologyShape.of(description);
            ReferenceTasks tasks = ReferenceTasks.of(description, shape, drivers.equals("one"));
            Reference run = new Reference(topology, captured.config(), shape, tasks, step, stateDir);
            long started = System.nanoTime();
            run.feed(sources, order.equals("interleaved"), ties.equals("descending"),
                     Path.of(opts.get("output")));
            Map<String, Object> summary = new LinkedHashMap<>();
            summary.put("records_piped", run.recordsPiped);  // a global record once per driver
            summary.put("records_skipped", run.recordsSkipped);
            summary.put("records_out", run.recordsOut);
            summary.put("seconds", Math.round((System.nanoTime() - started) / 1e6) / 1e3);
            summary.put("skipped_topics", run.skippedTopics);
            summary.put("per_task", tasks.perTask);
            summary.put("one_driver_why", tasks.oneDriverWhy);
            summary.put("drivers", run.driversMade);
            summary.put("stream_time_punctuators", run.punctuatorsKnown ? run.punctuators : null);
            System.out.println(JSON.writeValueAsString(summary));
        } finally {
            deleteTree(stateDir);
        }
    }

    private static String choice(Map<String, String> opts, String name, Set<String> allowed,
                                 String otherwise) throws Refused {
        String value = opts.getOrDefault(name, otherwise);
        if (!allowed.contains(value)) {
            throw new Refused("--" + name + " wants one of " + new TreeSet<>(allowed) + ", got " + value);
        }
        return value;
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

    /** One reference run: the input partitions into one TopologyTestDriver per task, their
     * output to OUT. */
    static final class Reference {
        private final Topology topology;
        private final Properties config;
        private final TopologyShape shape;
        private final ReferenceTasks tasks;
        private final long stepMs;
        private final Path stateDir;
        private final String internalPrefix;
        private final Map<String, Driver> open = new TreeMap<>(ReferenceTasks::compare);
        private final Map<String, Long> seq = new HashMap<>();
        private BufferedWriter writer;
        long recordsPiped;
        long recordsSkipped;
        long recordsOut;
        int driversMade;
        final SortedSet<String> skippedTopics = new TreeSet<>();
        // processors with a stream-time punctuator scheduled (read from the driver's task)
        final SortedSet<String> punctuators = new TreeSet<>();
        boolean punctuatorsKnown = true;

        Reference(Topology topology, Properties config, TopologyShape shape, ReferenceTasks tasks,
                  long stepMs, Path stateDir) {
            this.topology = topology;
            this.config = config;
            this.shape = shape;
            this.tasks = tasks;
            this.stepMs = stepMs;
            this.stateDir = stateDir;
            this.internalPrefix = config.getProperty(StreamsConfig.APPLICATION_ID_CONFIG) + "-";
        }

        void feed(List<Source> sources, boolean interleaved, boolean tiesDescending, Path out)
                throws Refused, IOException {
            List<Source> read = new ArrayList<>();
            for (Source source : sources) {
                if (shape.reads(source.topic())) {
                    read.add(source);
                } else {
                    skippedTopics.add(source.topic());
                    try (java.util.stream.Stream<String> lines = Files.lines(source.file())) {
                        recordsSkipped += lines.filter(l -> !l.isBlank()).count();
                    }
                }
            }
            try (BufferedWriter w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
                writer = w;
                if (interleaved) {
                    interleaved(read, tiesDescending);
                } else {
                    inTurn(read, tiesDescending);
                }
            } finally {
                for (Driver driver : new ArrayList<>(open.values())) {
                    driver.close();
                }
            }
        }

        /** Each task to its end, then the next: its partitions and every global topic's
         * merged (one driver: partition by partition, every topic's p merged). */
        private void inTurn(List<Source> read, boolean tiesDescending) throws Refused, IOException {
            Map<String, List<Source>> groups = new TreeMap<>(ReferenceTasks::compare);
            List<Source> globals = new ArrayList<>();
            for (Source source : read) {
                String task = tasks.task(source.topic(), source.partition());
                if (task == null) {
                    globals.add(source);
                }
                String group = tasks.perTask ? task : "0_" + source.partition();
                if (group != null) {
                    groups.computeIfAbsent(group, g -> new ArrayList<>()).add(source);
                }
            }
            for (Map.Entry<String, List<Source>> group : groups.entrySet()) {
                List<Source> fed = new ArrayList<>(group.getValue());
                if (tasks.perTask) {
                    fed.addAll(globals);
                }
                String task = tasks.perTask ? group.getKey() : ReferenceTasks.ONE;
                try (ReferenceFeed.Merge merge = new ReferenceFeed.Merge(fed, tiesDescending)) {
                    for (Fed record = merge.next(); record != null; record = merge.next()) {
                        pipe(driver(task, record.timestamp()), record);
                    }
                }
                if (tasks.perTask) {
                    Driver done = open.get(task);
                    if (done != null) {
                        done.close();
                    }
                }
            }
        }

        /** Every partition's records merged by timestamp, each to its task's driver, a global
         * topic's to every driver. */
        private void interleaved(List<Source> read, boolean tiesDescending) throws Refused, IOException {
            try (ReferenceFeed.Merge merge = new ReferenceFeed.Merge(read, tiesDescending)) {
                Fed first = merge.peek();
                if (first == null) {
                    return;
                }
                for (Source source : read) {  // every task's driver from the start: globals reach all
                    String task = tasks.task(source.topic(), source.partition());
                    if (task != null) {
                        driver(task, first.timestamp());
                    }
                }
                if (!tasks.perTask) {
                    driver(ReferenceTasks.ONE, first.timestamp());
                }
                for (Fed record = merge.next(); record != null; record = merge.next()) {
                    String task = tasks.task(record.source().topic(), record.source().partition());
                    if (task == null) {
                        for (Driver driver : new ArrayList<>(open.values())) {
                            pipe(driver, record);
                        }
                    } else {
                        pipe(driver(task, record.timestamp()), record);
                    }
                }
            }
        }

        private Driver driver(String task, long startMs) {
            Driver driver = open.get(task);
            if (driver == null) {  // wall-clock time starts at its first record's
                driver = new Driver(task, startMs, stateDir.resolve("task-" + driversMade));
                driversMade++;
                open.put(task, driver);
            }
            return driver;
        }

        private void pipe(Driver driver, Fed record) throws Refused, IOException {
            long index = recordsPiped++;
            try {
                driver.pipe(record);
            } catch (RuntimeException e) {
                writer.flush();
                throw new Refused("input " + record.source().topic() + " partition "
                                  + record.source().partition() + " offset " + record.offset()
                                  + " (input_index " + index + ", task " + driver.task
                                  + ") threw in the topology: " + explain(e), 3);
            }
            driver.drain(index);
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

        /** One task's TopologyTestDriver. */
        private final class Driver {
            final String task;
            private final TopologyTestDriver ttd;
            private final ByteArraySerializer serializer = new ByteArraySerializer();
            private final ByteArrayDeserializer deserializer = new ByteArrayDeserializer();
            private final Map<String, TestInputTopic<byte[], byte[]>> inputs = new HashMap<>();
            private final Map<String, TestOutputTopic<byte[], byte[]>> outputs = new HashMap<>();
            private final SortedSet<String> produced = new TreeSet<>();

            Driver(String task, long startMs, Path dir) {
                this.task = task;
                Properties own = new Properties();
                own.putAll(config);
                own.put(StreamsConfig.STATE_DIR_CONFIG, dir.toString());
                ttd = new TopologyTestDriver(topology, own, Instant.ofEpochMilli(startMs));
                notePunctuators();
            }

            void pipe(Fed record) {
                inputs.computeIfAbsent(record.source().topic(),
                                       t -> ttd.createInputTopic(t, serializer, serializer))
                    .pipeInput(new TestRecord<>(record.key(), record.value(), new RecordHeaders(),
                                                Instant.ofEpochMilli(record.timestamp())));
                if (stepMs > 0) {
                    ttd.advanceWallClockTime(Duration.ofMillis(stepMs));
                }
            }

            /** Every topic written so far is read out, the outputs' records written to OUT (the
             * rest dropped: the driver would keep changelog and repartition records forever). */
            void drain(long index) throws IOException {
                Set<String> now = ttd.producedTopicNames();
                if (now.size() != produced.size()) {
                    produced.addAll(now);
                }
                for (String topic : produced) {
                    TestOutputTopic<byte[], byte[]> queue = outputs.computeIfAbsent(
                        topic, t -> ttd.createOutputTopic(t, deserializer, deserializer));
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

            void close() {
                open.remove(task);
                notePunctuators();
                try {
                    ttd.close();
                } catch (RuntimeException e) {
                    System.err.println("closing the TopologyTestDriver of task " + task + ": " + e);
                }
            }

            /**
             * The processors with a stream-time punctuator scheduled, read from the driver's
             * task (no API says): the cluster punctuates after a batch of records of its own
             * choosing (StreamThread's numIterations), the driver after every record, so what
             * such a punctuator emits is the cluster's timing, not the input's.
             */
            private void notePunctuators() {
                if (!punctuatorsKnown) {
                    return;
                }
                try {
                    Object streamTask = field(ttd, TopologyTestDriver.class, "task");
                    if (streamTask == null) {
                        return;  // global stores only: no task
                    }
                    Object queue = field(streamTask, streamTask.getClass(), "streamTimePunctuationQueue");
                    for (Object schedule : (Iterable<?>) field(queue, queue.getClass(), "pq")) {
                        Object node = schedule.getClass().getMethod("node").invoke(schedule);
                        punctuators.add(String.valueOf(node.getClass().getMethod("name").invoke(node)));
                    }
                } catch (ReflectiveOperationException | RuntimeException e) {
                    punctuatorsKnown = false;
                }
            }
        }

        private static Object field(Object owner, Class<?> type, String name) throws ReflectiveOperationException {
            Field field = type.getDeclaredField(name);
            field.setAccessible(true);
            return field.get(owner);
        }
    }
}
