package dev.kchaos.kstreams;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The pod's trace (results/README.md, "Trace events"): one JSON object a line, appended,
 * {"ts_ns", "pod", "pid", "thread", "event", ...}. Each line is written with one write
 * call so a SIGKILL leaves at most one torn last line, which readers skip.
 */
final class Trace {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final OutputStream out;
    private final String pod;
    private final long pid = ProcessHandle.current().pid();

    Trace(String path, String pod) throws IOException {
        this.out = path == null ? null : new FileOutputStream(path, true);
        this.pod = pod;
    }

    /** A pod's trace: the file --trace names (none: nothing written), as --instance-id. */
    static Trace forPod(Flags flags) throws IOException {
        return new Trace(flags.get("trace", null), flags.get("instance-id", "pod-0"));
    }

    /** Wall-clock nanoseconds, the clock of Python's time.time_ns() in the harness. */
    static long nowNs() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    /** "StreamThread-1" from "ledger-app-<uuid>-StreamThread-1", "cleaner" from
     * "<client id>-CleanupThread" (the state-directory cleaner); "main" and others as they are. */
    static String shortThread(String name) {
        if (name.endsWith("-CleanupThread")) {
            return "cleaner";
        }
        for (String part : new String[] {"StreamThread-", "StateUpdater-", "GlobalStreamThread"}) {
            int at = name.indexOf(part);
            if (at >= 0) {
                return name.substring(at).equals("GlobalStreamThread") ? "global" : name.substring(at);
            }
        }
        return name;
    }

    void emit(String event, Object... fields) {
        emitAs(shortThread(Thread.currentThread().getName()), event, fields);
    }

    synchronized void emitAs(String thread, String event, Object... fields) {
        if (out == null) {
            return;
        }
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("ts_ns", nowNs());
        line.put("pod", pod);
        line.put("pid", pid);
        line.put("thread", thread);
        line.put("event", event);
        for (int i = 0; i + 1 < fields.length; i += 2) {
            line.put((String) fields[i], fields[i + 1]);
        }
        try {
            out.write((JSON.writeValueAsString(line) + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException e) {
            System.err.println("trace write failed: " + e);
        }
    }
}
