package dev.kchaos.kstreams;

import java.io.File;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Where {@link StateDirAgent}'s advice, inlined into Kafka's classes, writes: public, since
 * the advice runs inside Kafka's packages. Events before the app installs its trace (the
 * agent runs before main) are dropped; the cleaner starts only once the client is RUNNING.
 * - `cleaner-pass` {phase: start|end}, thread `cleaner`;
 * - `dir-locked` {task}: a task directory's lock taken, by a stream thread or the cleaner
 *   (which locks each unowned directory it looks at, the ones it deletes too);
 * - `checkpoint-read` {task, offsets}: a task's `.checkpoint` read, the offsets it held
 *   (`{}`: no file); the global store's is not traced.
 * - `checkpoint-delete` {task, reason `app`}: a task's `.checkpoint` deleted by Kafka Streams.
 */
public final class StateDirTrace {
    private static final Pattern TASK_DIR = Pattern.compile("\\d+_\\d+");
    private static volatile Trace installed;

    private StateDirTrace() {}

    static void install(Trace appTrace) {
        installed = appTrace;
    }

    public static void passStarted() {
        Trace trace = installed;
        if (trace != null) {
            trace.emitAs("cleaner", "cleaner-pass", "phase", "start");
        }
    }

    public static void passEnded() {
        Trace trace = installed;
        if (trace != null) {
            trace.emitAs("cleaner", "cleaner-pass", "phase", "end");
        }
    }

    public static void locked(String task) {
        Trace trace = installed;
        if (trace != null) {
            trace.emitAs(Trace.shortThread(Thread.currentThread().getName()), "dir-locked", "task", task);
        }
    }

    public static void checkpointRead(File file, Map<?, ?> offsets) {
        Trace trace = installed;
        String task = taskOf(file);
        if (trace == null || task == null) {
            return;
        }
        Map<String, Object> named = new TreeMap<>();  // {"topic-partition": offset}
        if (offsets != null) {
            offsets.forEach((partition, offset) -> named.put(String.valueOf(partition), offset));
        }
        trace.emitAs(Trace.shortThread(Thread.currentThread().getName()), "checkpoint-read",
                 "task", task, "offsets", named);
    }

    public static void checkpointDeleted(File file) {
        Trace trace = installed;
        String task = taskOf(file);
        if (trace != null && task != null) {
            trace.emitAs(Trace.shortThread(Thread.currentThread().getName()), "checkpoint-delete",
                         "task", task, "reason", "app");
        }
    }

    /** The task a `.checkpoint` belongs to (its directory's name), or null (the global's). */
    private static String taskOf(File file) {
        File dir = file == null ? null : file.getParentFile();
        return dir != null && TASK_DIR.matcher(dir.getName()).matches() ? dir.getName() : null;
    }
}
