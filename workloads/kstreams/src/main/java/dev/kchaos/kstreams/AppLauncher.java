package dev.kchaos.kstreams;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
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
 * Runs a user's Kafka Streams application (`--sut app`), found by convention: a public class
 * with `public static org.apache.kafka.streams.Topology topology(java.util.Properties)`,
 * given the run's Streams settings (default key and value serdes String). Modes:
 * <ul>
 * <li>`pod --app-class CLASS <pod flags>`: one pod (Pod, as LedgerApp's), plus TaskWatch
 *     for task-running/task-closed; the record cache is off (every update is emitted).
 *     Exit 0 after SIGTERM, 1 when the client goes to ERROR, 2 on bad flags or an app that
 *     cannot be loaded or started.
 * <li>`describe --app-class CLASS [--config K=V ...]`: one JSON line, the topology's topics
 *     and stores (TopologyShape).
 * <li>`reference --app-class CLASS --input IN.jsonl --output OUT.jsonl
 *     [--wall-clock-step-ms N] [--config K=V ...]`: the topology in TopologyTestDriver fed
 *     IN's records in file order (checker/oracle/reference.py); its output records to OUT,
 *     a summary line on stdout. Exit 3 when a record throws in the topology.
 * </ul>
 * A refusal is one line `kchaos-app: ...` on stderr.
 */
public final class AppLauncher {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final String PREFIX = "kchaos-app: ";
    static final String USAGE = "usage: AppLauncher pod --app-class CLASS <pod flags> | "
        + "describe --app-class CLASS [--config KEY=VALUE ...] | reference --app-class CLASS "
        + "--input IN.jsonl --output OUT.jsonl [--wall-clock-step-ms N] [--config KEY=VALUE ...]";

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
                case "describe" -> describe(rest);
                case "reference" -> ReferenceRun.reference(rest);
                default -> throw new Refused("no mode " + (mode.isEmpty() ? "given" : mode) + ": " + USAGE);
            }
        } catch (Refused e) {
            System.out.flush();
            System.err.println(PREFIX + e.getMessage());
            System.err.flush();
            if (mode.equals("pod")) {
                Runtime.getRuntime().halt(e.exit);  // a KafkaStreams may have threads already
            }
            System.exit(e.exit);
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
        String appClass = null;
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--app-class")) {
                if (i + 1 >= args.length) {
                    throw new Refused("--app-class wants a class name");
                }
                appClass = args[++i];
            } else {
                rest.add(args[i]);
            }
        }
        if (appClass == null) {
            throw new Refused("pod wants --app-class CLASS: " + USAGE);
        }
        Flags flags;
        Properties config;
        try {
            flags = Flags.parse(rest.toArray(new String[0]));
            config = Pod.config(flags);
        } catch (IllegalArgumentException e) {
            throw new Refused(e.getMessage());
        }
        // The pod flags naming topics, for an app that reads them (LedgerApp does).
        for (String[] topic : new String[][] {{"input-topic", LedgerApp.INPUT_TOPIC},
                {"output-topic", LedgerApp.OUTPUT_TOPIC}, {"accounts-topic", LedgerApp.ACCOUNTS_TOPIC}}) {
            if (flags.has(topic[0])) {
                config.put(topic[1], flags.get(topic[0], null));
            }
        }
        config.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);  // forced: every update out
        Trace trace = new Trace(flags.get("trace", null), flags.get("instance-id", "pod-0"));
        Topology topology = topology(appClass, config);
        try {
            return Pod.run(config, trace, topology, true);
        } catch (RuntimeException e) {
            throw new Refused(appClass + "'s topology did not start in Kafka Streams ("
                              + explain(e) + "): fix the app or its --streams-config");
        }
    }

    // ---- the convention

    /** CLASS.topology(a copy of config), or why not. */
    static Topology topology(String appClass, Properties config) throws Refused {
        String wanted = "public static org.apache.kafka.streams.Topology topology(java.util.Properties)";
        Class<?> cls;
        try {
            cls = Class.forName(appClass);
        } catch (ClassNotFoundException e) {
            throw new Refused("no class " + appClass + " on the classpath: give the class's full name "
                              + "and put the app's jar (with the jars it needs) on the classpath");
        } catch (LinkageError e) {
            throw new Refused("class " + appClass + " could not be loaded (" + e
                              + "): put the jars it needs on the classpath");
        }
        Method method;
        try {
            method = cls.getMethod("topology", Properties.class);
        } catch (NoSuchMethodException e) {
            throw new Refused(appClass + " has no " + wanted + ": add one that builds the app's topology");
        }
        if (!Modifier.isStatic(method.getModifiers())) {
            throw new Refused(appClass + ".topology(Properties) is not static: the convention is " + wanted);
        }
        if (!Topology.class.isAssignableFrom(method.getReturnType())) {
            throw new Refused(appClass + ".topology(Properties) returns " + method.getReturnType().getName()
                              + ", not this classpath's org.apache.kafka.streams.Topology: return the "
                              + "app's Topology and do not bundle kafka-streams in the app's jar");
        }
        Properties given = new Properties();
        given.putAll(config);
        Object topology;
        try {
            topology = method.invoke(null, given);
        } catch (IllegalAccessException e) {
            throw new Refused(appClass + " must be a public class with " + wanted);
        } catch (InvocationTargetException e) {
            throw new Refused(appClass + ".topology(Properties) threw " + explain(e.getCause())
                              + ": fix the app's topology method");
        } catch (LinkageError e) {
            throw new Refused(appClass + ".topology(Properties) could not run (" + e
                              + "): put the jars it needs on the classpath");
        }
        if (topology == null) {
            throw new Refused(appClass + ".topology(Properties) returned null: return the app's Topology");
        }
        return (Topology) topology;
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

    /** The settings describe and reference give the app: no cluster, a temporary state dir. */
    static Properties placeholder(String applicationId, Path stateDir, List<String> configs) throws Refused {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9");
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        for (String setting : configs) {
            int eq = setting.indexOf('=');
            if (eq <= 0) {
                throw new Refused("--config wants KEY=VALUE, got " + setting);
            }
            p.put(setting.substring(0, eq), setting.substring(eq + 1));
        }
        return p;
    }

    /** --flag value pairs of describe and reference; --config repeats. */
    static Map<String, String> options(String[] args, Set<String> known, List<String> configs)
            throws Refused {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new Refused("expected --flag value, got " + args[i] + ": " + USAGE);
            }
            String name = args[i].substring(2);
            if (name.equals("config")) {
                configs.add(args[i + 1]);
            } else if (known.contains(name)) {
                values.put(name, args[i + 1]);
            } else {
                throw new Refused("unknown flag --" + name + ": " + USAGE);
            }
        }
        if (!values.containsKey("app-class")) {
            throw new Refused("--app-class CLASS is required: " + USAGE);
        }
        return values;
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
        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(made), "remove-" + made.getFileName()));
        return made;
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

    static void describe(String[] args) throws Refused, IOException {
        List<String> configs = new ArrayList<>();
        Map<String, String> opts = options(args, Set.of("app-class"), configs);
        quietLogs();
        Path stateDir = temporary(Files.createTempDirectory("kchaos-describe-"));
        try {
            Properties config = placeholder("kchaos-describe", stateDir, configs);
            Topology topology = topology(opts.get("app-class"), config);
            TopologyShape shape = TopologyShape.of(topology.describe());
            System.out.println(JSON.writeValueAsString(shape.json()));
        } finally {
            deleteTree(stateDir);
        }
    }
}
