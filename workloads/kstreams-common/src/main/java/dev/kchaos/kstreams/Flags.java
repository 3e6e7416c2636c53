package dev.kchaos.kstreams;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The pod command-line contract of `python -m workloads.worker` (harness/sut/base.py,
 * PodSettings.argv), plus `--streams-config KEY=VALUE` (repeatable): any Kafka Streams
 * setting, applied last. `--bugs` names Python worker switches and is refused;
 * `--control-file` is accepted and unused (this app has no fault-injection hook).
 */
final class Flags {
    final Map<String, String> values = new HashMap<>();
    final List<String> streamsConfig = new ArrayList<>();

    static final List<String> KNOWN = List.of(
        "bootstrap", "application-id", "threads", "standbys", "guarantee", "bugs",
        "commit-interval-ms", "write-buffer-bytes", "cleaner-delay-ms", "cleaner-interval-ms",
        "instance-id", "state-dir", "trace", "control-file", "session-timeout-ms",
        "transaction-timeout-ms", "max-poll-records", "restore-max-poll-records",
        "input-topic", "output-topic", "accounts-topic", "group-protocol",
        "windows", "windows-topic", "sessions-topic", "write-buffer-count");

    static Flags parse(String[] args) {
        Flags flags = new Flags();
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --flag value, got " + args[i]);
            }
            String name = args[i].substring(2);
            if (name.equals("streams-config")) {
                if (args[i + 1].indexOf('=') <= 0) {
                    throw new IllegalArgumentException("--streams-config wants KEY=VALUE, got " + args[i + 1]);
                }
                flags.streamsConfig.add(args[i + 1]);
            } else if (KNOWN.contains(name)) {
                flags.values.put(name, args[i + 1]);
            } else {
                throw new IllegalArgumentException("unknown flag --" + name);
            }
        }
        for (String required : List.of("bootstrap", "state-dir")) {
            if (!flags.values.containsKey(required)) {
                throw new IllegalArgumentException("--" + required + " is required");
            }
        }
        if (!flags.get("bugs", "").isEmpty()) {
            throw new IllegalArgumentException("--bugs switches exist in the Python worker only");
        }
        return flags;
    }

    /** A ledger pod's flags; bad ones end the process: one line and exit 2. */
    static Flags parseOrExit(String[] args) {
        try {
            return parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("kstreams-ledger: " + e.getMessage());
            System.exit(2);
            throw e;  // not reached
        }
    }

    String get(String name, String fallback) {
        return values.getOrDefault(name, fallback);
    }

    boolean has(String name) {
        return values.containsKey(name);
    }

    int integer(String name, int fallback) {
        return Integer.parseInt(get(name, Integer.toString(fallback)));
    }
}
