package dev.kchaos.kstreams;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.Appender;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

/**
 * Trace events that Kafka Streams 2.x tells only its log, taken from the log lines as they
 * are written (a log4j2 appender on the `org.apache.kafka.streams` logger):
 * - `lock-failed` {task, kind}: "Could not create {standby task|stream task} {id} due to
 *   LockException ...; will retry" (AssignedTasks.initializeNewTasks, TRACE: the legacy
 *   log4j2.properties logs AssignedStandbyTasks/AssignedStreamsTasks at TRACE). Another
 *   thread of this process still held the task directory (KAFKA-8187's first step). The
 *   thread is the stream thread that failed; one event per thread and task a second (an
 *   active retries in the poll loop). 2.6 on no longer logs this line.
 * - `cleaner-delete` {task, age_s}: "Deleting obsolete state directory {dir} for task {id}
 *   as {ms}ms has elapsed" (StateDirectory.cleanRemovedTasks, INFO), thread `cleaner`.
 * The lock line comes pre-formatted (LogContext), so it is matched on its text; the
 * cleaner's on its format and parameters.
 */
final class LogTrace extends AbstractAppender {
    // AssignedTasks logs through LogContext's logger, which formats the message itself
    // (the appender sees the text, no parameters), prefixed "stream-thread [..] ".
    static final Pattern LOCK_FAILED = Pattern.compile(
        "Could not create (standby task|stream task) (\\d+_\\d+) due to \\S*LockException.*; will retry");
    static final String CLEANER_PREFIX = "Deleting obsolete state directory";
    // An active that cannot take its lock is retried in the poll loop (PARTITIONS_ASSIGNED
    // polls with no wait): thousands of lines a second. One event per thread and task a
    // second (a 2.2.1 failover traced 20,896 in 1.2 s without this).
    static final long LOCK_FAILED_EVERY_NS = 1_000_000_000L;
    private final Map<String, Long> lastLockFailed = new HashMap<>();
    private final Trace trace;

    private LogTrace(Trace trace) {
        super("kchaos-log-trace", null, null, true, Property.EMPTY_ARRAY);
        this.trace = trace;
    }

    /** Attaches the appender to the Kafka Streams logger (its children reach it). */
    static void install(Trace trace) {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration config = context.getConfiguration();
        Appender appender = new LogTrace(trace);
        appender.start();
        config.addAppender(appender);
        // Only there: its children (the TRACE and DEBUG ones of log4j2.properties) reach it
        // through additivity; on them too, a line would be traced twice.
        LoggerConfig streams = config.getLoggers().get("org.apache.kafka.streams");
        if (streams == null) {
            System.err.println("kstreams-ledger: no org.apache.kafka.streams logger: no lock-failed trace");
            return;
        }
        streams.addAppender(appender, null, null);
        context.updateLoggers();
    }

    static String kind(Object taskType) {
        return String.valueOf(taskType).startsWith("standby") ? "standby" : "active";
    }

    /** Whether a lock failure of `key` (thread, task, kind) is traced now. */
    synchronized boolean due(String key, long nowNs) {
        Long last = lastLockFailed.get(key);
        if (last != null && nowNs - last < LOCK_FAILED_EVERY_NS) {
            return false;
        }
        lastLockFailed.put(key, nowNs);
        return true;
    }

    @Override
    public void append(LogEvent event) {
        String text = event.getMessage().getFormattedMessage();
        String format = event.getMessage().getFormat();
        Object[] p = event.getMessage().getParameters();
        if (text != null && text.contains("Could not create")) {
            Matcher m = LOCK_FAILED.matcher(text);
            if (m.find()) {
                String thread = Trace.shortThread(event.getThreadName());
                if (due(thread + " " + m.group(2) + " " + m.group(1), System.nanoTime())) {
                    trace.emitAs(thread, "lock-failed", "task", m.group(2), "kind", kind(m.group(1)));
                }
            }
        } else if (format != null && format.contains(CLEANER_PREFIX) && format.contains("has elapsed")
                && p != null && p.length >= 4) {
            double ageS = p[3] instanceof Number ? ((Number) p[3]).doubleValue() / 1000.0 : -1.0;
            trace.emitAs("cleaner", "cleaner-delete", "task", String.valueOf(p[2]), "age_s", ageS);
        }
    }
}
