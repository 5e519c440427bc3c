package kgc.driver;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.LinkedBlockingQueue;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * One consumer application around Apache Kafka's {@code KafkaConsumer} (classic group protocol),
 * driven over stdin and reporting on stdout with kgc's client driver protocol, the one
 * {@code kgc/harness/clients/worker.py} speaks for the Python libraries.
 *
 * <p>Usage: {@code java -cp ... kgc.driver.ConsumerDriver CONFIG_JSON}. The config names the
 * bootstrap address, group, topic, client name, timeouts, the assignor ({@code assignment}: eager
 * is the range assignor, roundrobin the round-robin one, cooperative the cooperative-sticky one,
 * KIP-429), auto-commit, and optionally {@code group_instance_id} (static membership, KIP-345).
 *
 * <p>Commands, one JSON object per line: {@code set} (poll_ms, process_ms, commit), {@code stall}
 * (ms: the next batch takes that long), {@code commit} (mode sync|async: once after the current
 * batch), {@code close}. Events, one JSON object per line, each with {@code t}, the monotonic clock
 * in seconds ({@code System.nanoTime()}, CLOCK_MONOTONIC on Linux, the clock Python's
 * {@code time.monotonic()} reads): started, assigned, revoked, lost, stalled, processed,
 * committed, error, closed. The application processes a batch completely before it polls again and
 * commits only what it processed.
 */
public final class ConsumerDriver {
    private static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);

    private ConsumerDriver() {}

    /** Writes one event line, flushed at once (the harness orders events by their {@code t}). */
    static void emit(String kind, Map<String, Object> fields) {
        Map<String, Object> event = new java.util.LinkedHashMap<>();
        event.put("kind", kind);
        event.put("t", System.nanoTime() / 1e9);
        event.putAll(fields);
        String line = Json.write(event);
        synchronized (OUT) {
            OUT.print(line);
            OUT.print('\n');
            OUT.flush();
        }
    }

    static void emit(String kind) {
        emit(kind, Map.of());
    }

    static List<Integer> partitions(Collection<TopicPartition> tps) {
        List<Integer> out = new ArrayList<>();
        for (TopicPartition tp : tps) {
            out.add(tp.partition());
        }
        out.sort(null);
        return out;
    }

    /** The application loop's parameters, changed by commands read on a thread of their own. */
    static final class Loop {
        int pollMs;
        int processMs;
        String commit;
        int stallMs;
        String commitOnce;
        boolean closing;
        final LinkedBlockingQueue<Map<String, Object>> commands = new LinkedBlockingQueue<>();

        Loop(Map<String, Object> config) {
            pollMs = Json.intOf(config, "poll_ms", 200);
            processMs = Json.intOf(config, "process_ms", 0);
            commit = Json.strOf(config, "commit", "none");
            Thread reader = new Thread(this::read, "kgc-commands");
            reader.setDaemon(true);
            reader.start();
        }

        private void read() {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (!line.isBlank()) {
                        commands.add(Json.parseObject(line));
                    }
                }
            } catch (Exception e) {
                emit("error", Map.of("error", "commands: " + e));
            }
            commands.add(Map.of("op", "close")); // the driver went away
        }

        void applyCommands() {
            Map<String, Object> command;
            while ((command = commands.poll()) != null) {
                String op = Json.strOf(command, "op", "");
                switch (op) {
                    case "set" -> {
                        pollMs = Json.intOf(command, "poll_ms", pollMs);
                        processMs = Json.intOf(command, "process_ms", processMs);
                        commit = Json.strOf(command, "commit", commit);
                    }
                    case "stall" -> stallMs = Json.intOf(command, "ms", 0);
                    case "commit" -> commitOnce = Json.strOf(command, "mode", "sync");
                    case "close" -> closing = true;
                    default -> emit("error", Map.of("error", "unknown command " + op));
                }
            }
        }

        /** How long processing the next batch takes; a stall applies once and is reported when it starts. */
        int batchMs() {
            if (stallMs > 0) {
                int ms = stallMs;
                stallMs = 0;
                emit("stalled", Map.of("ms", ms));
                return ms;
            }
            return processMs;
        }

        String commitMode() {
            String once = commitOnce;
            commitOnce = null;
            if (once != null) {
                return once;
            }
            return "none".equals(commit) ? null : commit;
        }
    }

    static String assignor(String assignment) {
        return switch (assignment) {
            case "eager" -> "org.apache.kafka.clients.consumer.RangeAssignor";
            case "roundrobin" -> "org.apache.kafka.clients.consumer.RoundRobinAssignor";
            case "cooperative" -> "org.apache.kafka.clients.consumer.CooperativeStickyAssignor";
            default -> throw new IllegalArgumentException("unknown assignment " + assignment);
        };
    }

    static void run(Map<String, Object> config, Loop loop) throws Exception {
        String topic = Json.strOf(config, "topic", "");
        int requestTimeoutMs = Json.intOf(config, "request_timeout_ms", 5000);
        Properties props = new Properties();
        props.put("bootstrap.servers", Json.strOf(config, "bootstrap", ""));
        props.put("group.id", Json.strOf(config, "group", ""));
        props.put("client.id", Json.strOf(config, "name", ""));
        props.put("group.protocol", "classic");
        props.put("enable.auto.commit", String.valueOf(Json.boolOf(config, "auto_commit", false)));
        props.put("auto.commit.interval.ms", String.valueOf(Json.intOf(config, "auto_commit_interval_ms", 500)));
        props.put("auto.offset.reset", "earliest");
        props.put("session.timeout.ms", String.valueOf(Json.intOf(config, "session_timeout_ms", 45000)));
        props.put("heartbeat.interval.ms", String.valueOf(Json.intOf(config, "heartbeat_interval_ms", 3000)));
        props.put("max.poll.interval.ms", String.valueOf(Json.intOf(config, "max_poll_interval_ms", 300000)));
        props.put("request.timeout.ms", String.valueOf(requestTimeoutMs));
        // commitSync and close wait this long at most (Kafka's default is 60 s)
        props.put("default.api.timeout.ms", String.valueOf(2 * requestTimeoutMs));
        props.put("retry.backoff.ms", "100");
        props.put("reconnect.backoff.ms", "50");
        props.put("metadata.max.age.ms", "1000");
        props.put("partition.assignment.strategy", assignor(Json.strOf(config, "assignment", "eager")));
        String instance = Json.strOf(config, "group_instance_id", null);
        if (instance != null) {
            props.put("group.instance.id", instance);
        }
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());

        ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
                emit("revoked", Map.of("partitions", partitions(revoked)));
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
                emit("assigned", Map.of("partitions", partitions(assigned)));
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> lost) {
                emit("lost", Map.of("partitions", partitions(lost)));
            }
        };

        Map<Integer, Long> processed = new TreeMap<>();
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
        try {
            consumer.subscribe(List.of(topic), listener);
            emit("started", Map.of("library", "java", "version", AppInfoParser.getVersion()));
            while (true) {
                loop.applyCommands();
                if (loop.closing) {
                    break;
                }
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(loop.pollMs));
                List<List<Long>> records = new ArrayList<>();
                for (ConsumerRecord<byte[], byte[]> r : batch) {
                    records.add(List.of((long) r.partition(), r.offset()));
                }
                int ms = loop.batchMs();
                if (ms > 0) {
                    Thread.sleep(ms);
                }
                if (!records.isEmpty()) {
                    emit("processed", Map.of("records", records));
                }
                for (List<Long> r : records) {
                    processed.merge(r.get(0).intValue(), r.get(1) + 1, Math::max);
                }
                String mode = loop.commitMode();
                if (mode != null) {
                    commit(consumer, topic, processed, mode);
                }
            }
        } finally {
            // revokes the partitions and sends LeaveGroup (a dynamic member), waiting at most
            // request.timeout.ms for the coordinator
            consumer.close(Duration.ofMillis(requestTimeoutMs));
        }
        emit("closed");
    }

    static void commit(KafkaConsumer<byte[], byte[]> consumer, String topic, Map<Integer, Long> processed, String mode) {
        Set<TopicPartition> owned = consumer.assignment();
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        List<List<Long>> shown = new ArrayList<>();
        for (Map.Entry<Integer, Long> e : processed.entrySet()) {
            TopicPartition tp = new TopicPartition(topic, e.getKey());
            if (owned.contains(tp)) {
                offsets.put(tp, new OffsetAndMetadata(e.getValue()));
                shown.add(List.of((long) e.getKey(), e.getValue()));
            }
        }
        if (offsets.isEmpty()) {
            return;
        }
        try {
            if ("sync".equals(mode)) {
                consumer.commitSync(offsets);
            } else {
                consumer.commitAsync(offsets, null);
            }
            emit("committed", Map.of("mode", mode, "offsets", shown));
        } catch (RuntimeException exc) { // a failed commit is an event, not a crash
            emit("committed", Map.of("mode", mode, "error", exc.getClass().getSimpleName() + ": " + exc.getMessage()));
        }
    }

    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: ConsumerDriver CONFIG_JSON");
            System.exit(2);
        }
        try {
            Map<String, Object> config = Json.parseObject(args[0]);
            Loop loop = new Loop(config);
            run(config, loop);
        } catch (Throwable exc) { // reported to the harness, which decides
            emit("error", Map.of("error", exc.getClass().getSimpleName() + ": " + exc.getMessage()));
            OUT.flush();
            System.exit(1);
        }
        OUT.flush();
        System.exit(0);
    }
}
