package dev.kchaos.kstreams;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.ThreadMetadata;

/**
 * A user's processors do not trace `task-running`/`task-closed` as the ledger processor
 * does: each stream thread's active tasks are polled from the client's thread metadata and
 * a task is traced running when it shows while the client is RUNNING, closed when it no
 * longer shows (or the client went to NOT_RUNNING or ERROR). Coarser than the ledger's own
 * events: Kafka Streams refreshes a thread's metadata when the thread turns RUNNING after a
 * rebalance, and lists a task still restoring (in the state updater) among the active ones,
 * so `task-running` may come before the task's `restore-end`, and times are to the poll.
 */
final class TaskWatch extends Thread {
    private static final long PERIOD_MS = 100;
    private final KafkaStreams streams;
    private final Trace trace;
    private final Map<String, Set<String>> running = new HashMap<>();  // thread -> tasks
    private boolean over;

    TaskWatch(KafkaStreams streams, Trace trace) {
        super("task-watch");
        setDaemon(true);
        this.streams = streams;
        this.trace = trace;
    }

    @Override
    public void run() {
        while (!isInterrupted()) {
            try {
                poll();
            } catch (RuntimeException e) {
                // The client closing under the poll: the state listener closes all.
            }
            try {
                Thread.sleep(PERIOD_MS);
            } catch (InterruptedException ie) {
                return;
            }
        }
    }

    private synchronized void poll() {
        if (over) {
            return;
        }
        boolean clientRunning = streams.state() == KafkaStreams.State.RUNNING;
        Map<String, Set<String>> now = new HashMap<>();
        for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
            Set<String> tasks = now.computeIfAbsent(Trace.shortThread(thread.threadName()),
                                                    k -> new TreeSet<>());
            for (TaskMetadata task : thread.activeTasks()) {
                tasks.add(task.taskId().toString());
            }
        }
        for (Map.Entry<String, Set<String>> known : running.entrySet()) {
            Set<String> still = now.getOrDefault(known.getKey(), Set.of());
            for (String task : new TreeSet<>(known.getValue())) {
                if (!still.contains(task)) {
                    known.getValue().remove(task);
                    trace.emitAs(known.getKey(), "task-closed", "task", task);
                }
            }
        }
        running.values().removeIf(Set::isEmpty);
        if (!clientRunning) {
            return;
        }
        for (Map.Entry<String, Set<String>> shown : now.entrySet()) {
            Set<String> known = running.computeIfAbsent(shown.getKey(), k -> new TreeSet<>());
            for (String task : shown.getValue()) {
                if (known.add(task)) {
                    trace.emitAs(shown.getKey(), "task-running", "task", task);
                }
            }
        }
        running.values().removeIf(Set::isEmpty);
    }

    /** The client is NOT_RUNNING or in ERROR: every task still running is closed. */
    synchronized void closeAll() {
        for (Map.Entry<String, Set<String>> known : running.entrySet()) {
            for (String task : known.getValue()) {
                trace.emitAs(known.getKey(), "task-closed", "task", task);
            }
        }
        running.clear();
        over = true;
        interrupt();
    }
}
