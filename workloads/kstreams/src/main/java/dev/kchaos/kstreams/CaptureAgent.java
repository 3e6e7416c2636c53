package dev.kchaos.kstreams;

import static net.bytebuddy.matcher.ElementMatchers.isConstructor;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.Instrumentation;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * The launcher's Java agent (`-javaagent:` this jar, whose manifest names this class): when a
 * user's own `main` runs (`--app-main`), KafkaStreams is rewritten as it loads so that
 * <ul>
 * <li>each public constructor taking (Topology, Properties or StreamsConfig, ...) hands both
 *     to {@link Capture} first, which records them and gives back the settings the pod runs
 *     with (the run's own over the app's);
 * <li>after construction Capture attaches the run's listeners, trace and watches;
 * <li>setStateListener, setGlobalStateRestoreListener and setUncaughtExceptionHandler keep
 *     the app's listener and handler, chained behind the run's (the app may set them after
 *     ours: spring-kafka's StreamsBuilderFactoryBean sets its restore listener, null where
 *     the app gives none, right after constructing the client);
 * <li>start() is skipped where Capture says so (describing the app, not running it).
 * </ul>
 * Why an agent rather than a KafkaStreams of our own on the classpath: the agent rewrites
 * whichever release's class is loaded, so nothing of Kafka is copied per release, and the
 * app's main runs untouched (its own class loader, statics and shutdown hooks). Only this one
 * class of Kafka's is rewritten.
 */
public final class CaptureAgent {
    private CaptureAgent() {}

    private static final String KAFKA_STREAMS = "org.apache.kafka.streams.KafkaStreams";

    public static void premain(String args, Instrumentation instrumentation) {
        new AgentBuilder.Default()
            .disableClassFormatChanges()
            .type(named(KAFKA_STREAMS))
            .transform((builder, type, loader, module, domain) -> builder
                .visit(Advice.to(ConstructorAdvice.class).on(isConstructor()
                    .and(takesArgument(0, named("org.apache.kafka.streams.Topology")))
                    .and(takesArgument(1, named("java.util.Properties")
                        .or(named("org.apache.kafka.streams.StreamsConfig"))))))
                .visit(Advice.to(StateListenerAdvice.class).on(named("setStateListener")
                    .and(takesArguments(1))))
                .visit(Advice.to(RestoreListenerAdvice.class).on(named("setGlobalStateRestoreListener")
                    .and(takesArguments(1))))
                .visit(Advice.to(HandlerAdvice.class).on(named("setUncaughtExceptionHandler")
                    .and(takesArgument(0, named(
                        "org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler")))))
                .visit(Advice.to(StartAdvice.class).on(named("start").and(takesArguments(0)))))
            .installOn(instrumentation);
    }

    /** Inlined into the constructors: `this` may not be read before the exit. */
    public static final class ConstructorAdvice {
        private ConstructorAdvice() {}

        @Advice.OnMethodEnter
        static void enter(@Advice.Argument(0) Object topology,
                          @Advice.Argument(value = 1, readOnly = false, typing = Assigner.Typing.DYNAMIC)
                          Object config) {
            config = Capture.entering(topology, config);
        }

        @Advice.OnMethodExit
        static void exit(@Advice.This Object streams) {
            Capture.constructed(streams);
        }
    }

    public static final class StateListenerAdvice {
        private StateListenerAdvice() {}

        @Advice.OnMethodEnter
        static void enter(@Advice.Argument(value = 0, readOnly = false, typing = Assigner.Typing.DYNAMIC)
                          Object listener) {
            listener = Capture.stateListener(listener);
        }
    }

    public static final class RestoreListenerAdvice {
        private RestoreListenerAdvice() {}

        @Advice.OnMethodEnter
        static void enter(@Advice.Argument(value = 0, readOnly = false, typing = Assigner.Typing.DYNAMIC)
                          Object listener) {
            listener = Capture.restoreListener(listener);
        }
    }

    public static final class HandlerAdvice {
        private HandlerAdvice() {}

        @Advice.OnMethodEnter
        static void enter(@Advice.Argument(value = 0, readOnly = false, typing = Assigner.Typing.DYNAMIC)
                          Object handler) {
            handler = Capture.handler(handler);
        }
    }

    public static final class StartAdvice {
        private StartAdvice() {}

        @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class)
        static boolean enter() {
            return Capture.skipStart();
        }
    }
}
