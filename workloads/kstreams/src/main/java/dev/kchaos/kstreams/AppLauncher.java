package dev.kchaos.kstreams;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;

/**
 * Runs a user's Kafka Streams application (`--sut app`), entered where AppEntry says: a
 * method returning its Topology (`--app-class CLASS[#METHOD]`, given the run's Streams
 * settings, default key and value serdes String), or its own main (`--app-main CLASS
 * [--app-arg A ...]`, under the `-javaagent:` of this jar: CaptureAgent). ENTRY below is
 * either. Modes:
 * <ul>
 * <li>`pod ENTRY <pod flags>`: one pod (Pod, as LedgerApp's, or AppMainPod), plus TaskWatch
 *     for task-running/task-closed; the record cache is the app's (Kafka Streams' default,
 *     or what --streams-config says).
 *     Exit 0 after SIGTERM, 1 when the client goes to ERROR, 2 on bad flags or an app that
 *     cannot be loaded or started.
 * <li>`describe ENTRY [--config K=V ...]`: one JSON line, the topology's topics and stores
 *     (TopologyShape), and for a main the settings it built (`app_config`, secrets hidden).
 * <li>`reference ENTRY --input DIR --output OUT.jsonl [--order tasks-in-turn|interleaved]
 *     [--ties ascending|descending] [--wall-clock-step-ms N] [--drivers per-task|one]
 *     [--config K=V ...]`: the topology in TopologyTestDriver, one driver per task, fed
 *     DIR's input partitions (ReferenceRun, checker/oracle/reference.py); its output records
 *     to OUT, a summary line on stdout. Exit 3 when a record throws in the topology.
 * </ul>
 * `--capture-timeout-ms N` (default 60 s): how long a main may take to build its KafkaStreams.
 * A refusal is one line `kchaos-app: ...` on stderr.
 */
public final class AppLauncher {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final String PREFIX = "kchaos-app: ";
    static final String ENTRY = "(--app-class CLASS[#METHOD] | --app-main CLASS [--app-arg A ...])";
    static final String USAGE = "usage: AppLauncher pod " + ENTRY + " <pod flags> | describe " + ENTRY
        + " [--config KEY=VALUE ...] | reference " + ENTRY + " --input DIR --output OUT.jsonl "
        + "[--order tasks-in-turn|interleaved] [--ties ascending|descending] "
        + "[--wall-clock-step-ms N] [--drivers per-task|one] [--config KEY=VALUE ...]";
    static final Set<String> ENTRY_FLAGS = Set.of("app-class", "app-main", "capture-timeout-ms");

    private AppLauncher() {}

    /** Refused: one line on stderr, this exit code. */
    static final class Refused extends Exception {
        final int exit;

        Refused(String message) {
            this(message, 2);
        }

        Refused(String message, int exit) {
            super(message);
            this.exit = exit;
        }
    }

    /** What `temporary` made, removed by `end` as by the shutdown hooks it skips. */
    private static final List<Path> TEMPORARY = new java.util.concurrent.CopyOnWriteArrayList<>();

    public static void main(String[] args) {
        String mode = args.length == 0 ? "" : args[0];
        String[] rest = args.length == 0 ? args : java.util.Arrays.copyOfRange(args, 1, args.length);
        try {
            switch (mode) {
                case "pod" -> {
                    int exit = pod(rest);
                    if (exit != 0) {
                        Runtime.getRuntime().halt(exit);
                    }
                    return;  // after SIGTERM: the JVM is shutting down, no System.exit
                }
                case "describe" -> {
                    describe(rest);
                    end(0);
                }
                case "reference" -> {
                    ReferenceRun.reference(rest);
                    end(0);
                }
                default -> throw new Refused("no mode " + (mode.isEmpty() ? "given" : mode) + ": " + USAGE);
            }
        } catch (Refused e) {
            System.out.flush();
            System.err.println(PREFIX + e.getMessage());
            System.err.flush();
            if (mode.equals("pod")) {
                Runtime.getRuntime().halt(e.exit);  // a KafkaStreams may have threads already
            }
            end(e.exit);
        } catch (Exception e) {
            System.out.flush();
            System.err.println(PREFIX + mode + " failed: " + e);
            System.err.flush();
            Runtime.getRuntime().halt(1);
        }
        System.exit(0);
    }

    // ---- pod

    static int pod(String[] args) throws Refused, IOException, InterruptedException {
        Map<String, String> entryFlags = new HashMap<>();
        List<String> appArgs = new ArrayList<>();
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String name = args[i].startsWith("--") ? args[i].substring(2) : "";
            if (ENTRY_FLAGS.contains(name) || name.equals("app-arg")) {
                if (i + 1 >= args.length) {
                    throw new Refused(args[i] + " wants a value: " + USAGE);
                }
                if (name.equals("app-arg")) {
                    appArgs.add(args[++i]);
                } else {
                    entryFlags.put(name, args[++i]);
                }
            } else {
                rest.add(args[i]);
            }
        }
        AppEntry entry = entry(entryFlags, appArgs);
        Flags flags;
        Properties config;
        try {
            flags = Flags.parse(rest.toArray(new String[0]));
            config = Pod.config(flags);
        } catch (IllegalArgumentException e) {
            throw new Refused(e.getMessage());
        }
        Trace trace = Trace.forPod(flags);
        if (entry.isMain()) {
            return AppMainPod.run(entry, flags, trace);
        }
        // The pod flags naming topics, for an app that reads them (LedgerApp does).
        for (String[] topic : new String[][] {{"input-topic", LedgerApp.INPUT_TOPIC},
                {"output-topic", LedgerApp.OUTPUT_TOPIC}, {"accounts-topic", LedgerApp.ACCOUNTS_TOPIC}}) {
            if (flags.has(topic[0])) {
                config.put(topic[1], flags.get(topic[0], null));
            }
        }
        if (flags.streamsConfig.stream().noneMatch(s -> s.startsWith(
                StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG + "="))) {
            // Pod.config's 0 is the ledger app's: an app runs with Kafka Streams' default
            // cache (or the deprecated setting), as deployed, unless the run says otherwise.
            config.remove(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG);
        }
        Topology topology = entry.fromMethod(config);
        try {
            return Pod.run(config, trace, topology, true);
        } catch (RuntimeException e) {
            throw new Refused(entry.name() + "'s topology did not start in Kafka Streams ("
                              + explain(e) + "): fix the app or its --streams-config");
        }
    }

    static AppEntry entry(Map<String, String> opts, List<String> appArgs) throws Refused {
        return AppEntry.parse(opts.get("app-class"), opts.get("app-main"), appArgs,
                              opts.get("capture-timeout-ms"));
    }

    /**
     * The entry's topology for describe and reference, and the settings to build it with: a
     * method is given the placeholder settings; a main's own settings get the placeholder's
     * cluster, id, state dir, cache and --config over them. DESCRIBE lets main go on, to
     * refuse a second client.
     */
    static AppEntry.Captured capture(AppEntry entry, String applicationId, Path stateDir,
                                     List<String> configs, Capture.Mode how)
            throws Refused, InterruptedException {
        Properties config = placeholder(applicationId, stateDir, configs, !entry.isMain());
        if (!entry.isMain()) {
            return new AppEntry.Captured(entry.fromMethod(config), config);
        }
        Thread main = entry.startMain(how, app -> AppEntry.over(app, config), streams -> { });
        if (how == Capture.Mode.DESCRIBE) {
            AppEntry.settle(main, entry.appMain);
        }
        return new AppEntry.Captured(Capture.topology(), AppEntry.over(Capture.appConfig(), config));
    }

    static String explain(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String text = e.getClass().getName() + ": " + e.getMessage();
        if (root != e) {
            text += " (caused by " + root.getClass().getName() + ": " + root.getMessage() + ")";
        }
        return text.replace('\n', ' ');
    }

    /** The settings describe and reference give the app: no cluster, a temporary state dir;
     * with `defaults` (a topology method's) also the guarantee and String serdes a pod has,
     * which a main brings itself. */
    static Properties placeholder(String applicationId, Path stateDir, List<String> configs,
                                  boolean defaults) throws Refused {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9");
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        if (defaults) {
            p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
            p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
            p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        }
        for (String setting : configs) {
            int eq = setting.indexOf('=');
            if (eq <= 0) {
                throw new Refused("--config wants KEY=VALUE, got " + setting);
            }
            p.put(setting.substring(0, eq), setting.substring(eq + 1));
        }
        return p;
    }

    /** --flag value pairs of describe and reference; --config and --app-arg repeat. */
    static Map<String, String> options(String[] args, Set<String> known, List<String> configs,
                                       List<String> appArgs) throws Refused {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new Refused("expected --flag value, got " + args[i] + ": " + USAGE);
            }
            String name = args[i].substring(2);
            if (name.equals("config")) {
                configs.add(args[i + 1]);
            } else if (name.equals("app-arg")) {
                appArgs.add(args[i + 1]);
            } else if (known.contains(name) || ENTRY_FLAGS.contains(name)) {
                values.put(name, args[i + 1]);
            } else {
                throw new Refused("unknown flag --" + name + ": " + USAGE);
            }
        }
        return values;
    }

    static void setLevel(String logger, String level) {
        try {
            org.apache.logging.log4j.core.config.Configurator.setAllLevels(
                logger, org.apache.logging.log4j.Level.valueOf(level));
        } catch (Throwable ignored) {
            // another logging backend: leave it
        }
    }

    static void quietLogs() {
        try {  // stdout is the answer; Kafka's INFO lines (on stderr) would only bury errors
            org.apache.logging.log4j.core.config.Configurator.setAllLevels(
                "org.apache.kafka", org.apache.logging.log4j.Level.WARN);
            // the warning that the state dir is under the OS's temporary folder: it is meant to
            org.apache.logging.log4j.core.config.Configurator.setLevel(
                "org.apache.kafka.streams.processor.internals.StateDirectory",
                org.apache.logging.log4j.Level.ERROR);
        } catch (Throwable ignored) {
            // another logging backend: leave it
        }
    }

    /** A temporary folder removed when this ends, SIGTERM included. */
    static Path temporary(Path made) {
        TEMPORARY.add(made);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(made), "remove-" + made.getFileName()));
        return made;
    }

    /**
     * Ends describe and reference: the temporary folders removed, then halt, not exit. A
     * main's threads and shutdown hooks are not ours to wait for: Spring Boot's hook closes
     * its context, which waits for the refresh that the reference left parked at the
     * KafkaStreams constructor, forever.
     */
    static void end(int exit) {
        System.out.flush();
        System.err.flush();
        for (Path made : TEMPORARY) {
            deleteTree(made);
        }
        Runtime.getRuntime().halt(exit);
    }

    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary folder left behind
        }
    }

    // ---- describe

    static void describe(String[] args) throws Refused, IOException, InterruptedException {
        List<String> configs = new ArrayList<>();
        List<String> appArgs = new ArrayList<>();
        Map<String, String> opts = options(args, Set.of(), configs, appArgs);
        AppEntry entry = entry(opts, appArgs);
        quietLogs();
        if (entry.isMain()) {  // its client is built against no cluster: the warnings say only that
            setLevel("org.apache.kafka", "ERROR");
        }
        Path stateDir = temporary(Files.createTempDirectory("kchaos-describe-"));
        try {
            AppEntry.Captured captured = capture(entry, "kchaos-describe", stateDir, configs,
                                                 Capture.Mode.DESCRIBE);
            Map<String, Object> doc = TopologyShape.of(captured.topology().describe()).json();
            if (entry.isMain()) {
                doc.put("app_config", shown(Capture.appConfig()));
            }
            System.out.println(JSON.writeValueAsString(doc));
        } finally {
            deleteTree(stateDir);
        }
    }

    private static final java.util.regex.Pattern SECRET =
        java.util.regex.Pattern.compile("(?i).*(password|secret|jaas|token|credential).*");

    /** A main's settings as the report shows them: class values by name, secrets hidden. */
    static Map<String, String> shown(Properties config) {
        Map<String, String> shown = new java.util.TreeMap<>();
        for (Map.Entry<Object, Object> e : config.entrySet()) {
            String key = String.valueOf(e.getKey());
            Object value = e.getValue();
            String text = value instanceof Class<?> cls ? cls.getName() : String.valueOf(value);
            shown.put(key, SECRET.matcher(key).matches() ? "(hidden)" : text);
        }
        return shown;
    }
}
