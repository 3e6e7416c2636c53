package dev.kchaos.kstreams;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.returns;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.io.File;
import java.lang.instrument.Instrumentation;
import java.util.Map;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * The legacy app's Java agent (`-javaagent:` this jar, its manifest's Premain-Class): traces
 * what a 2.x or 3.x release does with its state directory and tells no log line of, through
 * {@link StateDirTrace}:
 * <ul>
 * <li>a pass of the state-directory cleaner, its start and end
 *     (`StateDirectory.cleanRemovedTasks(long)`, the cleaner thread's entry point);
 * <li>a task directory's lock taken (`StateDirectory.lock(TaskId)` returning true), by a
 *     stream thread or by the cleaner;
 * <li>a task's `.checkpoint` read (`OffsetCheckpoint.read()`), with the offsets it held, and
 *     deleted (`OffsetCheckpoint.delete()`: under exactly-once 2.x deletes it right after
 *     the read, which the checks must see to know the file is gone).
 * </ul>
 * KAFKA-8187's reachable sibling turns on their order (docs/releases.md): a task that reads
 * its checkpoint before it locks its directory, a cleaner pass that deletes the directory in
 * between. Why an agent: these three are Kafka's internals, whose log lines differ by release
 * or are missing; the methods exist, with these signatures, in every release the legacy app
 * runs (2.1 to 3.6). Only these methods are rewritten, and only to call out at their ends.
 */
public final class StateDirAgent {
    private StateDirAgent() {}

    private static final String INTERNALS = "org.apache.kafka.streams.processor.internals.";
    private static final String TASK_ID = "org.apache.kafka.streams.processor.TaskId";

    public static void premain(String args, Instrumentation instrumentation) {
        new AgentBuilder.Default()
            .disableClassFormatChanges()
            .type(named(INTERNALS + "StateDirectory"))
            .transform((builder, type, loader, module, domain) -> builder
                .visit(Advice.to(CleanerPassAdvice.class).on(named("cleanRemovedTasks")
                    .and(takesArguments(long.class))))
                .visit(Advice.to(LockAdvice.class).on(named("lock")
                    .and(takesArguments(1))
                    .and(takesArgument(0, named(TASK_ID)))
                    .and(returns(boolean.class)))))
            .type(named("org.apache.kafka.streams.state.internals.OffsetCheckpoint"))
            .transform((builder, type, loader, module, domain) -> builder
                .visit(Advice.to(CheckpointReadAdvice.class).on(named("read")
                    .and(takesArguments(0))))
                .visit(Advice.to(CheckpointDeleteAdvice.class).on(named("delete")
                    .and(takesArguments(0)))))
            .installOn(instrumentation);
    }

    /** Inlined into StateDirectory.cleanRemovedTasks(long). */
    public static final class CleanerPassAdvice {
        private CleanerPassAdvice() {}

        @Advice.OnMethodEnter
        static void enter() {
            StateDirTrace.passStarted();
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class)
        static void exit() {
            StateDirTrace.passEnded();
        }
    }

    /** Inlined into StateDirectory.lock(TaskId). */
    public static final class LockAdvice {
        private LockAdvice() {}

        @Advice.OnMethodExit
        static void exit(@Advice.Argument(0) Object taskId, @Advice.Return boolean locked) {
            if (locked) {
                StateDirTrace.locked(String.valueOf(taskId));
            }
        }
    }

    /** Inlined into OffsetCheckpoint.read(). */
    public static final class CheckpointReadAdvice {
        private CheckpointReadAdvice() {}

        @Advice.OnMethodExit
        static void exit(@Advice.FieldValue("file") File file,
                         @Advice.Return(typing = Assigner.Typing.DYNAMIC) Map<?, ?> offsets) {
            StateDirTrace.checkpointRead(file, offsets);
        }
    }

    /** Inlined into OffsetCheckpoint.delete(). */
    public static final class CheckpointDeleteAdvice {
        private CheckpointDeleteAdvice() {}

        @Advice.OnMethodExit
        static void exit(@Advice.FieldValue("file") File file) {
            StateDirTrace.checkpointDeleted(file);
        }
    }
}
