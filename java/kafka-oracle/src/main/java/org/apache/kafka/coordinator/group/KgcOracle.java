/*
 * kgc's oracle: Apache Kafka 4.0.2's group coordinator shard (GroupCoordinatorShard, GroupMetadataManager,
 * OffsetMetadataManager) driven deterministically over JSON lines on stdin/stdout.
 *
 * The class lives in Kafka's package only to read two private collections of ClassicGroup and the group map of
 * GroupMetadataManager (by reflection); every protocol decision is Kafka's own code. What the broker does around
 * the shard is reproduced here and named where it is done:
 *   - GroupCoordinatorService (group-coordinator, 4.0.2): empty group id, session-timeout bounds, the mapping of
 *     exceptions to error codes (CoordinatorOperationExceptionHelper.handleOperationException, called as is);
 *   - KafkaApis.scala (core, 4.0.2): SyncGroup v5+ without protocol type/name -> INCONSISTENT_GROUP_PROTOCOL;
 *   - CoordinatorRuntime (coordinator-common, 4.0.2): a write with records is replayed (when asked) and completes
 *     when its records commit; a write without records waits for every earlier write to commit; the append future
 *     of a result is completed before the response future; timers run their operation as a write.
 * The clock, the timer, the log (which writes commit, which fail) and the executor are the harness's.
 */
package org.apache.kafka.coordinator.group;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.HeartbeatResponseDataJsonConverter;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.JoinGroupResponseDataJsonConverter;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupResponseDataJsonConverter;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetCommitResponseDataJsonConverter;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseDataJsonConverter;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.common.runtime.CoordinatorExecutor;
import org.apache.kafka.coordinator.common.runtime.CoordinatorOperationExceptionHelper;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.common.runtime.CoordinatorResult;
import org.apache.kafka.coordinator.common.runtime.CoordinatorTimer;
import org.apache.kafka.coordinator.group.classic.ClassicGroup;
import org.apache.kafka.coordinator.group.classic.ClassicGroupMember;
import org.apache.kafka.coordinator.group.classic.ClassicGroupState;
import org.apache.kafka.coordinator.group.metrics.GroupCoordinatorMetrics;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import com.yammer.metrics.core.MetricsRegistry;

import org.apache.kafka.common.metrics.Metrics;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

public final class KgcOracle {
    /** The one Kafka release this harness is written against (its APIs drift from 4.1 on). */
    public static final String KAFKA_VERSION = "4.0.2";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final short RESPONSE_VERSION = 9;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(KgcOracle.class);

    // ------------------------------------------------------------------ the clock
    /** The harness's clock. ClassicGroup.transitionTo reads the clock right after changing state, so each read is
     *  also where the harness notices a state change (every transition of a classic group goes through it). */
    final class Clock implements Time {
        long nowMs;

        @Override
        public long milliseconds() {
            noticeStates();
            return nowMs;
        }

        @Override
        public long nanoseconds() {
            return TimeUnit.MILLISECONDS.toNanos(nowMs);
        }

        @Override
        public void sleep(long ms) {
            nowMs += ms;
        }

        @Override
        public void waitObject(Object obj, java.util.function.Supplier<Boolean> condition, long deadlineMs) {
            throw new UnsupportedOperationException("the harness never waits");
        }
    }

    // ------------------------------------------------------------------ the timer
    static final class Timeout {
        final String key;
        final long deadlineMs;
        final long armedAtMs;
        final long seq;
        final String kind;
        final CoordinatorTimer.TimeoutOperation<Void, CoordinatorRecord> operation;
        boolean cancelled;

        Timeout(String key, long armedAtMs, long deadlineMs, long seq, String kind,
                CoordinatorTimer.TimeoutOperation<Void, CoordinatorRecord> operation) {
            this.key = key;
            this.armedAtMs = armedAtMs;
            this.deadlineMs = deadlineMs;
            this.seq = seq;
            this.kind = kind;
            this.operation = operation;
        }
    }

    /** A timer like Kafka's MockCoordinatorTimer: one timeout per key (scheduling a key replaces it), fired in
     *  deadline order (then scheduling order) when the harness moves the clock. */
    final class Timer implements CoordinatorTimer<Void, CoordinatorRecord> {
        final Map<String, Timeout> byKey = new HashMap<>();
        final PriorityQueue<Timeout> queue = new PriorityQueue<>((a, b) ->
            a.deadlineMs != b.deadlineMs ? Long.compare(a.deadlineMs, b.deadlineMs) : Long.compare(a.seq, b.seq));
        long seq;

        @Override
        public void schedule(String key, long delay, TimeUnit unit, boolean retry, TimeoutOperation<Void, CoordinatorRecord> op) {
            schedule(key, delay, unit, retry, 500L, op);
        }

        @Override
        public void schedule(String key, long delay, TimeUnit unit, boolean retry, long retryBackoff,
                             TimeoutOperation<Void, CoordinatorRecord> op) {
            cancel(key);
            long deadline = clock.nowMs + unit.toMillis(delay);
            Timeout t = new Timeout(key, clock.nowMs, deadline, seq++, kindOf(key), op);
            byKey.put(key, t);
            queue.add(t);
        }

        @Override
        public void scheduleIfAbsent(String key, long delay, TimeUnit unit, boolean retry,
                                     TimeoutOperation<Void, CoordinatorRecord> op) {
            if (!byKey.containsKey(key)) schedule(key, delay, unit, retry, op);
        }

        @Override
        public void cancel(String key) {
            Timeout t = byKey.remove(key);
            if (t != null) t.cancelled = true;
        }

        Timeout nextDue(long upToMs) {
            while (!queue.isEmpty() && queue.peek().cancelled) queue.poll();
            Timeout head = queue.peek();
            return head != null && head.deadlineMs <= upToMs ? head : null;
        }
    }

    /** The scenario name of a timer key (GroupMetadataManager.classicGroup{Join,Sync,Heartbeat}Key). A join timer
     *  armed while the group is Empty, or re-armed by the initial join timer itself, is the initial one
     *  (GroupMetadataManager.prepareRebalance / tryCompleteInitialRebalanceElseSchedule). */
    String kindOf(String key) {
        for (String g : watched) {
            if (key.equals("join-" + g)) {
                ClassicGroup group = classicGroup(g);
                boolean initial = (group != null && group.isInState(ClassicGroupState.EMPTY))
                    || (firing != null && firing.key.equals(key) && firing.kind.equals("initial_join"));
                return initial ? "initial_join" : "join";
            }
            if (key.equals("sync-" + g)) return "sync";
            if (key.startsWith("heartbeat-" + g + "-")) return "heartbeat";
        }
        return "other";
    }

    // ------------------------------------------------------------------ the log
    /** A write in the harness's log: its events complete when it commits (or fail with it). */
    static final class Write {
        final List<Runnable> onCommit = new ArrayList<>();
        final List<java.util.function.Consumer<Throwable>> onFail = new ArrayList<>();
        final boolean manual;
        final String group;
        final int generation;
        final boolean hasRecords;
        final Map<String, byte[]> assignment = new LinkedHashMap<>();
        /** A leader's SyncGroup write (classicGroupSyncToClassicGroup): its callback installs the assignment. */
        boolean assignmentWrite;
        /** Committed right after the request that issued it (not held for store_complete). */
        boolean auto;
        final List<String> memberIds = new ArrayList<>();

        Write(boolean manual, String group, int generation, boolean hasRecords) {
            this.manual = manual;
            this.group = group;
            this.generation = generation;
            this.hasRecords = hasRecords;
        }
    }

    // ------------------------------------------------------------------ state
    final Clock clock = new Clock();
    Timer timer;
    GroupCoordinatorShard shard;
    GroupMetadataManager manager;
    SnapshotRegistry snapshots;
    long offset;
    final List<Write> log = new ArrayList<>();
    /** The assignment of the SyncGroup being handled (what a leader's write carries). */
    final Map<String, byte[]> pendingAssignment = new LinkedHashMap<>();
    final Set<String> watched = new TreeSet<>();
    final Set<String> unloaded = new TreeSet<>();
    final Map<String, String> lastState = new HashMap<>();
    Timeout firing;
    ArrayNode events = NODES.arrayNode();
    int maxSessionTimeoutMs;
    int minSessionTimeoutMs;
    /** Timers fire only when named (op "fire"), never because the clock passed their deadline; set by op "timers". */
    boolean manualTimers;
    /** Whether each step marker carries the groups as the step left them (op "step_groups"; the observer of the
     *  Python side needs them, a run without one does not, and describing every group is most of a step's cost). */
    boolean stepGroups = true;

    private static Field groupsField;
    private static Field pendingJoinField;
    private static Field pendingSyncField;

    static {
        try {
            groupsField = GroupMetadataManager.class.getDeclaredField("groups");
            groupsField.setAccessible(true);
            pendingJoinField = ClassicGroup.class.getDeclaredField("pendingJoinMembers");
            pendingJoinField.setAccessible(true);
            pendingSyncField = ClassicGroup.class.getDeclaredField("pendingSyncMembers");
            pendingSyncField.setAccessible(true);
        } catch (NoSuchFieldException e) {
            throw new IllegalStateException("Kafka " + AppInfoParser.getVersion() + " is not the " + KAFKA_VERSION
                + " this harness reads: " + e.getMessage());
        }
    }

    void configure(JsonNode props) {
        Map<String, Object> config = new HashMap<>();
        config.put("offsets.topic.num.partitions", "1");
        // kgc's world has no offset retention: the periodic cleanup (GroupCoordinatorShard.cleanupGroupMetadata)
        // would delete an Empty group without offsets after offsets.retention.check.interval.ms. Switched off.
        config.put("offsets.retention.check.interval.ms", String.valueOf(1_000_000_000_000_000L));
        props.fields().forEachRemaining(e -> config.put(e.getKey(), e.getValue().asText()));
        GroupCoordinatorConfig groupConfig = GroupCoordinatorConfig.fromProps(config);
        minSessionTimeoutMs = groupConfig.classicGroupMinSessionTimeoutMs();
        maxSessionTimeoutMs = groupConfig.classicGroupMaxSessionTimeoutMs();
        clock.nowMs = 0;
        timer = new Timer();
        snapshots = new SnapshotRegistry(new LogContext());
        offset = 0;
        log.clear();
        watched.clear();
        unloaded.clear();
        lastState.clear();
        assignmentGeneration.clear();
        instanceGeneration.clear();
        pendingAssignment.clear();
        firing = null;
        manualTimers = false;
        stepGroups = true;
        events = NODES.arrayNode();
        CoordinatorExecutor<CoordinatorRecord> executor = new CoordinatorExecutor<>() {
            @Override
            public <R> boolean schedule(String key, TaskRunnable<R> task, TaskOperation<CoordinatorRecord, R> operation) {
                return false; // classic groups never use the executor (consumer-group regex resolution does)
            }

            @Override
            public boolean isScheduled(String key) {
                return false;
            }

            @Override
            public void cancel(String key) {
            }
        };
        GroupCoordinatorShard.Builder builder = new GroupCoordinatorShard.Builder(groupConfig, new GroupConfigManager(Map.of()));
        builder.withAuthorizer(Optional.empty());
        shard = builder
            .withLogContext(new LogContext("[kgc-oracle] "))
            .withTime(clock)
            .withTimer(timer)
            .withExecutor(executor)
            .withCoordinatorMetrics(new GroupCoordinatorMetrics(new MetricsRegistry(), new Metrics()))
            .withTopicPartition(new TopicPartition("__consumer_offsets", 0))
            .withSnapshotRegistry(snapshots)
            .build();
        try {
            Field f = GroupCoordinatorShard.class.getDeclaredField("groupMetadataManager");
            f.setAccessible(true);
            manager = (GroupMetadataManager) f.get(shard);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        snapshots.idempotentCreateSnapshot(0);
        shard.onLoaded(MetadataImage.EMPTY);
    }

    ClassicGroup classicGroup(String groupId) {
        if (manager == null) return null;
        try {
            @SuppressWarnings("unchecked")
            Map<String, Group> groups = (Map<String, Group>) groupsField.get(manager);
            Group g = groups.get(groupId);
            return g instanceof ClassicGroup ? (ClassicGroup) g : null;
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    void noticeStates() {
        for (String g : watched) {
            ClassicGroup group = classicGroup(g);
            String state = group == null ? null : group.currentState().toString();
            String before = lastState.get(g);
            // A group coming into being is Empty without a transition (ClassicGroup's constructor).
            boolean created = before == null && "Empty".equals(state);
            if ("CompletingRebalance".equals(before) && "PreparingRebalance".equals(state)) {
                setAssignmentGeneration(group, -1);
            }
            if (state != null && !state.equals(before) && !created) {
                ObjectNode e = events.addObject();
                e.put("t", "state");
                e.put("group", g);
                e.put("state", state);
            }
            if (state == null) lastState.remove(g);
            else lastState.put(g, state);
        }
    }

    // ------------------------------------------------------------------ running writes as the runtime does
    /** Runs one write operation as CoordinatorRuntime.CoordinatorWriteEvent does: records are replayed when the
     *  result says so and appended; the event completes when its write commits. Without records it waits for
     *  every earlier write (CoordinatorRuntime.append -> waitForPendingWrites). */
    /** The request being handled ("" while a timeout runs). */
    String op = "";

    <T> void write(CoordinatorResult<T, CoordinatorRecord> result, boolean manual, String group, int generation,
                   java.util.function.Consumer<T> onDone, java.util.function.Consumer<Throwable> onError) {
        CompletableFuture<Void> append = result.appendFuture();
        if (!result.records().isEmpty()) {
            snapshots.idempotentCreateSnapshot(offset);
            if (result.replayRecords()) {
                for (CoordinatorRecord record : result.records()) {
                    shard.replay(offset, -1L, (short) -1, record);
                    offset++;
                }
            } else {
                offset += result.records().size();
            }
            snapshots.idempotentCreateSnapshot(offset);
        }
        Write w;
        boolean pendingBefore = !log.isEmpty();
        if (!result.records().isEmpty() || pendingBefore) {
            boolean assignmentWrite = op.equals("sync") && !result.records().isEmpty();
            // A leader's write always commits in a step of its own (as a replicated write does, after the
            // request): at once after the request unless the caller completes it (manual).
            w = new Write(assignmentWrite, group, generation, !result.records().isEmpty());
            w.auto = assignmentWrite && !manual;
            w.assignmentWrite = assignmentWrite;
            if (w.assignmentWrite) {
                w.assignment.putAll(pendingAssignment);
                ClassicGroup g = classicGroup(group);
                if (g != null) g.allMembers().forEach(m -> w.memberIds.add(m.memberId()));
            }
            log.add(w);
        } else {
            w = null;
        }
        Runnable commit = () -> {
            if (append != null) append.complete(null);
            onDone.accept(result.response());
        };
        java.util.function.Consumer<Throwable> fail = t -> {
            if (append != null) append.completeExceptionally(t);
            onError.accept(t);
        };
        if (w == null) {
            commit.run();
        } else {
            w.onCommit.add(commit);
            w.onFail.add(fail);
            drainLog();
        }
    }

    /** Commits every write at the head of the log up to the first manual one. */
    void drainLog() {
        while (!log.isEmpty() && !log.get(0).manual) {
            Write w = log.remove(0);
            boolean applies = w.assignmentWrite && applies(w);
            w.onCommit.forEach(Runnable::run);
            if (applies) setAssignmentGeneration(classicGroup(w.group), w.generation);
        }
    }

    /** Whether a leader's write would be applied by its callback now (the guard of the append callback in
     *  classicGroupSyncToClassicGroup: still CompletingRebalance, same generation). */
    boolean applies(Write w) {
        ClassicGroup group = classicGroup(w.group);
        return group != null && group.isInState(ClassicGroupState.COMPLETING_REBALANCE) && group.generationId() == w.generation;
    }

    /** The outstanding manual write finishes: commits, or fails with the error (the runtime then reverts the state
     *  machine to the write's base offset: CoordinatorRuntime.failCurrentBatch). Whether Kafka's append callback
     *  applies is read the way its callback decides (GroupMetadataManager.classicGroupSyncToClassicGroup). */
    ObjectNode storeComplete(String errorName) {
        ObjectNode out = NODES.objectNode();
        Write w = log.isEmpty() ? null : log.get(0);
        if (w == null || !w.manual) {
            out.put("error", "no outstanding write");
            return out;
        }
        ClassicGroup group = classicGroup(w.group);
        boolean applies = applies(w);
        log.remove(0);
        Errors error = Errors.valueOf(errorName);
        if (error == Errors.NONE) {
            w.onCommit.forEach(Runnable::run);
            if (applies) setAssignmentGeneration(group, w.generation);
        } else {
            Throwable t = error.exception();
            w.onFail.forEach(f -> f.accept(t));
            if (applies) setAssignmentGeneration(group, -1);
        }
        noticeStates();
        drainLog();
        ObjectNode m = marker("store_callback");
        m.put("store_error", errorName);
        m.put("applied", applies);
        m.put("write_kind", "assignment");
        out.put("applied", applies);
        return out;
    }

    // ------------------------------------------------------------------ requests
    RequestContext context(ApiKeys api, int version, String clientId) {
        try {
            return new RequestContext(
                new RequestHeader(api, (short) version, clientId, 0),
                "kgc", InetAddress.getLoopbackAddress(), KafkaPrincipal.ANONYMOUS,
                ListenerName.forSecurityProtocol(SecurityProtocol.PLAINTEXT), SecurityProtocol.PLAINTEXT,
                ClientInformation.EMPTY, false);
        } catch (RuntimeException e) {
            throw e;
        }
    }

    void respond(long id, String api, JsonNode body) {
        ObjectNode e = events.addObject();
        e.put("t", "response");
        e.put("id", id);
        e.put("api", api);
        e.set("body", body);
    }

    static String text(JsonNode n, String field, String dflt) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? dflt : v.asText();
    }

    static byte[] bytes(JsonNode n) {
        return n == null || n.isNull() ? new byte[0] : Base64.getDecoder().decode(n.asText());
    }

    /** The error the broker answers for an exception (GroupCoordinatorService's exceptionally handlers). */
    static Errors mapped(Throwable t) {
        return CoordinatorOperationExceptionHelper.handleOperationException("kgc", null, unwrap(t),
            (BiFunction<Errors, String, Errors>) (error, message) -> error, LOG);
    }

    static Throwable unwrap(Throwable t) {
        while (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) t = t.getCause();
        return t;
    }

    boolean rejectUnloaded(String group) {
        return unloaded.contains(group);
    }

    void join(long id, JsonNode r) {
        String group = r.get("group").asText();
        watched.add(group);
        int version = r.get("version").asInt();
        JoinGroupRequestData req = new JoinGroupRequestData()
            .setGroupId(group)
            .setMemberId(text(r, "member_id", ""))
            .setGroupInstanceId(text(r, "instance", null))
            .setProtocolType(r.get("protocol_type").asText())
            .setSessionTimeoutMs(r.get("session").asInt())
            .setRebalanceTimeoutMs(r.get("rebalance").asInt())
            .setReason(text(r, "reason", null));
        JoinGroupRequestData.JoinGroupRequestProtocolCollection protocols = new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
        for (JsonNode p : r.get("protocols")) {
            protocols.add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName(p.get(0).asText()).setMetadata(bytes(p.get(1))));
        }
        req.setProtocols(protocols);
        java.util.function.Consumer<JoinGroupResponseData> answer = d -> respond(id, "join",
            JoinGroupResponseDataJsonConverter.write(d, RESPONSE_VERSION));
        // GroupCoordinatorService.joinGroup: checks before the shard.
        if (rejectUnloaded(group)) {
            answer.accept(new JoinGroupResponseData().setMemberId(req.memberId()).setErrorCode(Errors.NOT_COORDINATOR.code()));
            return;
        }
        if (group.isEmpty()) {
            answer.accept(new JoinGroupResponseData().setMemberId(req.memberId()).setErrorCode(Errors.INVALID_GROUP_ID.code()));
            return;
        }
        if (req.sessionTimeoutMs() < minSessionTimeoutMs || req.sessionTimeoutMs() > maxSessionTimeoutMs) {
            answer.accept(new JoinGroupResponseData().setMemberId(req.memberId()).setErrorCode(Errors.INVALID_SESSION_TIMEOUT.code()));
            return;
        }
        CompletableFuture<JoinGroupResponseData> future = new CompletableFuture<>();
        future.thenAccept(answer);
        runWrite(() -> shard.classicGroupJoin(context(ApiKeys.JOIN_GROUP, version, text(r, "client_id", "consumer")), req, future),
            false, group, -1, __ -> { }, t -> {
                if (!future.isDone()) future.complete(new JoinGroupResponseData().setErrorCode(mapped(t).code()));
            });
    }

    void sync(long id, JsonNode r) {
        String group = r.get("group").asText();
        watched.add(group);
        int version = r.get("version").asInt();
        SyncGroupRequestData req = new SyncGroupRequestData()
            .setGroupId(group)
            .setGenerationId(r.get("generation").asInt())
            .setMemberId(text(r, "member_id", ""))
            .setGroupInstanceId(text(r, "instance", null))
            .setProtocolType(text(r, "protocol_type", null))
            .setProtocolName(text(r, "protocol_name", null));
        List<SyncGroupRequestData.SyncGroupRequestAssignment> assignments = new ArrayList<>();
        for (JsonNode a : r.get("assignments")) {
            assignments.add(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId(a.get(0).asText()).setAssignment(bytes(a.get(1))));
        }
        req.setAssignments(assignments);
        pendingAssignment.clear();
        assignments.forEach(a -> pendingAssignment.put(a.memberId(), a.assignment()));
        java.util.function.Consumer<SyncGroupResponseData> answer = d -> respond(id, "sync",
            SyncGroupResponseDataJsonConverter.write(d, (short) 5));
        if (rejectUnloaded(group)) {
            answer.accept(new SyncGroupResponseData().setErrorCode(Errors.NOT_COORDINATOR.code()));
            return;
        }
        // KafkaApis.handleSyncGroupRequest: from v5 protocol type and name are mandatory.
        if (version >= 5 && (req.protocolType() == null || req.protocolName() == null)) {
            answer.accept(new SyncGroupResponseData().setErrorCode(Errors.INCONSISTENT_GROUP_PROTOCOL.code()));
            return;
        }
        if (group.isEmpty()) {
            answer.accept(new SyncGroupResponseData().setErrorCode(Errors.INVALID_GROUP_ID.code()));
            return;
        }
        CompletableFuture<SyncGroupResponseData> future = new CompletableFuture<>();
        future.thenAccept(answer);
        runWrite(() -> shard.classicGroupSync(context(ApiKeys.SYNC_GROUP, version, "consumer"), req, future),
            r.path("manual").asBoolean(false), group, req.generationId(), __ -> { }, t -> {
                if (!future.isDone()) future.complete(new SyncGroupResponseData().setErrorCode(mapped(t).code()));
            });
    }

    void heartbeat(long id, JsonNode r) {
        String group = r.get("group").asText();
        watched.add(group);
        HeartbeatRequestData req = new HeartbeatRequestData()
            .setGroupId(group)
            .setGenerationId(r.get("generation").asInt())
            .setMemberId(text(r, "member_id", ""))
            .setGroupInstanceId(text(r, "instance", null));
        java.util.function.Consumer<HeartbeatResponseData> answer = d -> respond(id, "heartbeat",
            HeartbeatResponseDataJsonConverter.write(d, (short) 4));
        if (rejectUnloaded(group)) {
            answer.accept(new HeartbeatResponseData().setErrorCode(Errors.NOT_COORDINATOR.code()));
            return;
        }
        if (group.isEmpty()) {
            answer.accept(new HeartbeatResponseData().setErrorCode(Errors.INVALID_GROUP_ID.code()));
            return;
        }
        runWrite(() -> shard.classicGroupHeartbeat(context(ApiKeys.HEARTBEAT, r.get("version").asInt(), "consumer"), req),
            false, group, -1, answer, t -> {
                Errors e = mapped(t);
                // GroupCoordinatorService.heartbeat: a loading coordinator answers NONE.
                answer.accept(new HeartbeatResponseData().setErrorCode(
                    (e == Errors.COORDINATOR_LOAD_IN_PROGRESS ? Errors.NONE : e).code()));
            });
    }

    void leave(long id, JsonNode r) {
        String group = r.get("group").asText();
        watched.add(group);
        LeaveGroupRequestData req = new LeaveGroupRequestData().setGroupId(group);
        List<LeaveGroupRequestData.MemberIdentity> members = new ArrayList<>();
        for (JsonNode m : r.get("members")) {
            members.add(new LeaveGroupRequestData.MemberIdentity()
                .setMemberId(m.get(0).asText())
                .setGroupInstanceId(m.get(1).isNull() ? null : m.get(1).asText())
                .setReason(m.get(2).isNull() ? null : m.get(2).asText()));
        }
        req.setMembers(members);
        java.util.function.Consumer<LeaveGroupResponseData> answer = d -> respond(id, "leave",
            LeaveGroupResponseDataJsonConverter.write(d, (short) 5));
        if (rejectUnloaded(group)) {
            answer.accept(new LeaveGroupResponseData().setErrorCode(Errors.NOT_COORDINATOR.code()));
            return;
        }
        if (group.isEmpty()) {
            answer.accept(new LeaveGroupResponseData().setErrorCode(Errors.INVALID_GROUP_ID.code()));
            return;
        }
        runWrite(() -> shard.classicGroupLeave(context(ApiKeys.LEAVE_GROUP, r.get("version").asInt(), "consumer"), req),
            false, group, -1, answer, t -> {
                Errors e = mapped(t);
                LeaveGroupResponseData d = new LeaveGroupResponseData();
                if (e == Errors.UNKNOWN_MEMBER_ID) {
                    // GroupCoordinatorService.leaveGroup: group not found -> every member UNKNOWN_MEMBER_ID.
                    for (LeaveGroupRequestData.MemberIdentity m : members) {
                        d.members().add(new LeaveGroupResponseData.MemberResponse().setMemberId(m.memberId())
                            .setGroupInstanceId(m.groupInstanceId()).setErrorCode(Errors.UNKNOWN_MEMBER_ID.code()));
                    }
                } else {
                    d.setErrorCode(e.code());
                }
                answer.accept(d);
            });
    }

    void commit(long id, JsonNode r) {
        String group = r.get("group").asText();
        watched.add(group);
        OffsetCommitRequestData req = new OffsetCommitRequestData()
            .setGroupId(group)
            .setMemberId(text(r, "member_id", ""))
            .setGenerationIdOrMemberEpoch(r.get("generation").asInt())
            .setGroupInstanceId(text(r, "instance", null));
        Map<String, OffsetCommitRequestData.OffsetCommitRequestTopic> topics = new LinkedHashMap<>();
        for (JsonNode p : r.get("offsets")) {
            topics.computeIfAbsent(p.get(0).asText(), n -> new OffsetCommitRequestData.OffsetCommitRequestTopic().setName(n))
                .partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                    .setPartitionIndex(p.get(1).asInt()).setCommittedOffset(p.get(2).asLong())
                    .setCommittedMetadata(p.get(3).asText()));
        }
        req.setTopics(new ArrayList<>(topics.values()));
        int version = r.get("version").asInt();
        java.util.function.Consumer<OffsetCommitResponseData> answer = d -> respond(id, "commit",
            OffsetCommitResponseDataJsonConverter.write(d, (short) 8));
        if (rejectUnloaded(group)) {
            answer.accept(OffsetCommitRequest.getErrorResponse(req, Errors.NOT_COORDINATOR));
            return;
        }
        runWrite(() -> shard.commitOffset(context(ApiKeys.OFFSET_COMMIT, version, "consumer"), req),
            false, group, -1, answer, t -> answer.accept(OffsetCommitRequest.getErrorResponse(req, mapped(t))));
    }

    void fetch(long id, JsonNode r) {
        String group = r.get("group").asText();
        watched.add(group);
        OffsetFetchRequestData.OffsetFetchRequestGroup req = new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(group);
        Map<String, OffsetFetchRequestData.OffsetFetchRequestTopics> topics = new LinkedHashMap<>();
        for (JsonNode p : r.get("partitions")) {
            topics.computeIfAbsent(p.get(0).asText(), n -> new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(n).setPartitionIndexes(new ArrayList<>()))
                .partitionIndexes().add(p.get(1).asInt());
        }
        req.setTopics(new ArrayList<>(topics.values()));
        ObjectNode body = NODES.objectNode();
        ArrayNode parts = body.putArray("partitions");
        if (rejectUnloaded(group)) {
            body.put("error", Errors.NOT_COORDINATOR.name());
        } else {
            try {
                // A read at the last committed offset, as GroupCoordinatorService.fetchOffsets schedules it.
                OffsetFetchResponseData.OffsetFetchResponseGroup g = shard.fetchOffsets(req, committedOffset());
                body.put("error", Errors.forCode(g.errorCode()).name());
                for (OffsetFetchResponseData.OffsetFetchResponseTopics t : g.topics()) {
                    for (OffsetFetchResponseData.OffsetFetchResponsePartitions p : t.partitions()) {
                        ArrayNode a = parts.addArray();
                        a.add(t.name()).add(p.partitionIndex()).add(p.committedOffset())
                            .add(p.metadata() == null ? "" : p.metadata()).add(Errors.forCode(p.errorCode()).name());
                    }
                }
            } catch (RuntimeException e) {
                body.put("error", mapped(e).name());
            }
        }
        respond(id, "fetch", body);
    }

    long committedOffset() {
        // Writes still in the log are not committed; the harness has no reader at an older offset than the
        // newest snapshot it keeps, so with writes outstanding it reads the latest state (documented).
        return Long.MAX_VALUE;
    }

    interface Op<T> {
        CoordinatorResult<T, CoordinatorRecord> run();
    }

    <T> void runWrite(Op<T> op, boolean manual, String group, int generation,
                      java.util.function.Consumer<T> onDone, java.util.function.Consumer<Throwable> onError) {
        CoordinatorResult<T, CoordinatorRecord> result;
        Map<String, Set<String>> before = membership();
        try {
            result = op.run();
        } catch (Throwable t) {
            onError.accept(t);
            noticeRemovals(before, "request");
            return;
        }
        write(result, manual, group, generation, onDone, onError);
        noticeRemovals(before, "request");
        noticeStates();
    }

    // ------------------------------------------------------------------ membership changes
    Map<String, Set<String>> membership() {
        Map<String, Set<String>> out = new HashMap<>();
        for (String g : watched) {
            ClassicGroup group = classicGroup(g);
            if (group == null) continue;
            Set<String> ids = new TreeSet<>();
            for (ClassicGroupMember m : group.allMembers()) {
                ids.add("M:" + m.memberId());
                m.groupInstanceId().ifPresent(i -> ids.add("I:" + i + "=" + m.memberId()));
            }
            for (String p : pendingJoin(group)) ids.add("P:" + p);
            out.put(g, ids);
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static Set<String> pendingJoin(ClassicGroup group) {
        try {
            return (Set<String>) pendingJoinField.get(group);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    @SuppressWarnings("unchecked")
    static Set<String> pendingSync(ClassicGroup group) {
        try {
            return (Set<String>) pendingSyncField.get(group);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    void noticeRemovals(Map<String, Set<String>> before, String cause) {
        Map<String, Set<String>> after = membership();
        for (Map.Entry<String, Set<String>> e : before.entrySet()) {
            Set<String> now = after.getOrDefault(e.getKey(), Set.of());
            for (String id : e.getValue()) {
                if (now.contains(id) || id.startsWith("I:")) continue;
                boolean pending = id.startsWith("P:");
                String member = id.substring(2);
                // A pending id that became a member is not a removal.
                if (pending && now.contains("M:" + member)) continue;
                // A static member whose id was replaced (ClassicGroup.replaceStaticMember) did not leave.
                String instance = null;
                for (String i : e.getValue()) {
                    if (i.startsWith("I:") && i.endsWith("=" + member)) instance = i.substring(2, i.length() - member.length() - 1);
                }
                if (!pending && instance != null) {
                    String prefix = "I:" + instance + "=";
                    if (now.stream().anyMatch(x -> x.startsWith(prefix))) continue;
                }
                ObjectNode ev = events.addObject();
                ev.put("t", "removed");
                ev.put("group", e.getKey());
                ev.put("member", member);
                ev.put("pending", pending);
                ev.put("cause", cause);
            }
        }
    }

    // ------------------------------------------------------------------ time
    /** Moves the clock to now + ms, firing each due timeout at its own deadline (the clock stands at the deadline
     *  while it runs, so timeouts it arms count from there), then stops at now + ms. A timeout's operation runs
     *  as a write (CoordinatorRuntime's timer task schedules it as a write event). */
    void advance(long ms) {
        long target = clock.nowMs + ms;
        if (manualTimers) { // under manual timers only "fire" fires a timeout
            clock.nowMs = target;
            return;
        }
        while (true) {
            Timeout t = timer.nextDue(target);
            if (t == null) break;
            timer.queue.poll();
            timer.byKey.remove(t.key);
            clock.nowMs = Math.max(clock.nowMs, t.deadlineMs);
            fire(t);
        }
        clock.nowMs = target;
    }

    /** Fires exactly the timeout armed under {@code key}: the clock moves to its deadline if it is not there yet,
     *  every other timeout stays armed, due or not. Sound for Kafka 4.0.2 because its runtime runs a timeout late
     *  anyway: CoordinatorRuntime.CoordinatorTimerImpl hands an expired timer to the event loop as a write event,
     *  which runs after the events queued before it and runs at all only if the key still maps to that timer
     *  ({@code tasks.remove(key, this)}); a timeout left pending here is one whose event is still queued. */
    void fireKey(String key) {
        Timeout t = timer.byKey.remove(key);
        if (t == null) throw new IllegalArgumentException("no timer armed under key " + key);
        timer.queue.remove(t);
        clock.nowMs = Math.max(clock.nowMs, t.deadlineMs);
        fire(t);
    }

    /** After a request under manual timers: only an InitialDelayedJoin armed by that request with no delay fires
     *  (group.initial.rebalance.delay.ms 0; GroupMetadataManager.prepareRebalance, 4.0.2), and its own re-arming
     *  with no delay (tryCompleteInitialRebalanceElseSchedule), which the model takes inside the request's step.
     *  Every other timeout, a zero-delay one included, waits to be fired by its key: a rebalance timeout armed with
     *  no delay (ClassicGroup.rebalanceTimeoutMs() is 0 once no member is left while pending member ids remain,
     *  GroupMetadataManager.maybeCompleteJoinElseSchedule / completeClassicGroupJoin, 4.0.2) is a step of the
     *  model's own. Kafka's runtime allows that order: CoordinatorRuntime.CoordinatorTimerImpl.schedule
     *  (coordinator-common 4.0.2) adds the task to a SystemTimer, which hands an already-expired task to its
     *  executor thread, whose run() enqueues the timeout as a write event behind the events already queued. A
     *  zero-delay timeout armed by an earlier step (a timer firing) is never fired here: that was the harness's
     *  old rule (fire whatever was armed at the current instant with no delay), which fired it after whichever
     *  request came next, in the middle of the model's run. */
    void fireImmediate(long armedFromSeq) {
        while (true) {
            Timeout due = null;
            for (Timeout t : timer.byKey.values()) {
                if (t.seq >= armedFromSeq && t.kind.equals("initial_join") && t.deadlineMs == t.armedAtMs
                        && t.armedAtMs == clock.nowMs && (due == null || t.seq < due.seq)) due = t;
            }
            if (due == null) return;
            fireKey(due.key);
        }
    }

    void fire(Timeout t) {
        if (!t.kind.equals("other")) {
            ObjectNode ev = events.addObject();
            ev.put("t", "timer");
            ev.put("kind", t.kind);
            String group = null;
            for (String g : watched) {
                if (t.key.equals("join-" + g) || t.key.equals("sync-" + g) || t.key.startsWith("heartbeat-" + g + "-")) group = g;
            }
            ev.put("group", group);
            if (t.kind.equals("heartbeat")) {
                String member = t.key.substring(("heartbeat-" + group + "-").length());
                ClassicGroup g = classicGroup(group);
                ev.put("member", member);
                ev.put("pending", g != null && !g.hasMember(member) && g.isPendingMember(member));
            }
        }
        Timeout previous = firing;
        firing = t;
        Map<String, Set<String>> before = membership();
        try {
            CoordinatorResult<Void, CoordinatorRecord> result = t.operation.generateRecords();
            write(result, false, null, -1, __ -> { }, __ -> { });
        } catch (Throwable e) {
            LOG.warn("timeout {} failed: {}", t.key, e.toString());
        } finally {
            firing = previous;
        }
        noticeRemovals(before, t.kind);
        noticeStates();
        if (!t.kind.equals("other")) {
            ObjectNode m = marker("timer");
            m.put("timer", t.kind);
            m.put("key", t.key);
            m.put("delay", t.deadlineMs - t.armedAtMs);
        }
    }

    // ------------------------------------------------------------------ unload and Dead
    /** The partition is unloaded: GroupCoordinatorShard.onUnloaded (groups Dead, parked requests NOT_COORDINATOR);
     *  afterwards the runtime answers every request for it NOT_COORDINATOR (CoordinatorRuntime.withActiveContextOrThrow). */
    void unload(String group) {
        watched.add(group);
        shard.onUnloaded();
        noticeStates();
        unloaded.add(group);
        marker("unload");
    }

    /** The group alone goes Dead the way GroupMetadataManager.onUnloaded moves a classic group, but stays addressable. */
    void markDead(String groupId) {
        watched.add(groupId);
        ClassicGroup group = classicGroup(groupId);
        if (group == null) return;
        group.transitionTo(ClassicGroupState.DEAD);
        switch (group.previousState()) {
            case PREPARING_REBALANCE:
                group.allMembers().forEach(member -> group.completeJoinFuture(member, new JoinGroupResponseData()
                    .setMemberId(member.memberId()).setErrorCode(Errors.NOT_COORDINATOR.code())));
                break;
            case COMPLETING_REBALANCE:
            case STABLE:
                group.allMembers().forEach(member -> group.completeSyncFuture(member, new SyncGroupResponseData()
                    .setErrorCode(Errors.NOT_COORDINATOR.code())));
                break;
            default:
                break;
        }
        noticeStates();
        marker("mark_dead");
    }

    // ------------------------------------------------------------------ describe
    ObjectNode describe(String groupId) {
        ObjectNode out = NODES.objectNode();
        out.put("now", clock.nowMs);
        ClassicGroup group = classicGroup(groupId);
        out.put("exists", group != null);
        out.put("unloaded", unloaded.contains(groupId));
        if (group != null) {
            out.put("state", group.currentState().toString());
            out.put("previous_state", group.previousState().toString());
            out.put("generation", group.generationId());
            out.put("leader", group.leaderOrNull());
            out.put("protocol_type", group.protocolType().orElse(null));
            out.put("protocol_name", group.protocolName().orElse(null));
            out.put("new_member_added", group.newMemberAdded());
            ArrayNode members = out.putArray("members");
            List<ClassicGroupMember> sorted = new ArrayList<>(group.allMembers());
            sorted.sort((a, b) -> a.memberId().compareTo(b.memberId()));
            for (ClassicGroupMember m : sorted) {
                ObjectNode o = members.addObject();
                o.put("member_id", m.memberId());
                o.put("instance", m.groupInstanceId().orElse(null));
                o.put("client_id", m.clientId());
                o.put("client_host", m.clientHost());
                o.put("session", m.sessionTimeoutMs());
                o.put("rebalance", m.rebalanceTimeoutMs());
                o.put("protocol_type", m.protocolType());
                ArrayNode ps = o.putArray("protocols");
                m.supportedProtocols().forEach(p -> ps.addArray().add(p.name()).add(Base64.getEncoder().encodeToString(p.metadata())));
                o.put("assignment", Base64.getEncoder().encodeToString(m.assignment()));
                o.put("awaiting_join", m.isAwaitingJoin());
                o.put("awaiting_sync", m.isAwaitingSync());
                o.put("is_new", m.isNew());
                o.put("assignment_generation", assignmentGeneration.getOrDefault(m.memberId(), -1));
                Timeout hb = timer.byKey.get("heartbeat-" + groupId + "-" + m.memberId());
                if (hb != null) o.put("heartbeat_deadline", hb.deadlineMs);
                else o.putNull("heartbeat_deadline");
            }
            ArrayNode pending = out.putArray("pending");
            new TreeSet<>(pendingJoin(group)).forEach(pending::add);
            ArrayNode pendingSync = out.putArray("pending_sync");
            new TreeSet<>(pendingSync(group)).forEach(pendingSync::add);
        }
        ArrayNode timers = out.putArray("timers");
        for (Timeout t : timer.byKey.values()) {
            if (t.kind.equals("other")) continue;
            ObjectNode o = timers.addObject();
            o.put("kind", t.kind);
            o.put("key", t.key);
            o.put("armed_at", t.armedAtMs);
            o.put("deadline", t.deadlineMs);
            String prefix = "heartbeat-" + groupId + "-";
            if (t.key.startsWith(prefix)) {
                String member = t.key.substring(prefix.length());
                o.put("member", member);
                o.put("pending", group != null && !group.hasMember(member) && group.isPendingMember(member));
            }
        }
        ArrayNode writes = out.putArray("writes");
        for (Write w : log) {
            if (!w.hasRecords) continue;
            ObjectNode o = writes.addObject();
            o.put("group", w.group);
            o.put("generation", w.generation);
            o.put("manual", w.manual);
            ObjectNode a = o.putObject("assignment");
            w.assignment.forEach((k, v) -> a.put(k, Base64.getEncoder().encodeToString(v)));
            ArrayNode ids = o.putArray("member_ids");
            w.memberIds.forEach(ids::add);
        }
        return out;
    }

    /** One request: handled as one atomic step (marked), then a timeout armed with no delay expires at once, as
     *  the runtime's timer hands it to the event loop right after this write; under manual timers only the
     *  InitialDelayedJoin this request armed does (see fireImmediate). */
    void request(String op, long id, JsonNode r) {
        this.op = op;
        long armedFromSeq = timer.seq;
        switch (op) {
            case "join": join(id, r); break;
            case "sync": sync(id, r); break;
            case "heartbeat": heartbeat(id, r); break;
            case "leave": leave(id, r); break;
            case "commit": commit(id, r); break;
            default: fetch(id, r); break;
        }
        this.op = "";
        noticeStates();
        ObjectNode m = marker("request");
        m.put("api", op);
        m.put("id", id);
        while (!log.isEmpty() && log.get(0).auto) storeComplete("NONE");
        if (manualTimers) fireImmediate(armedFromSeq);
        else advance(0);
    }

    // ------------------------------------------------------------------ atomic steps, as an observer sees them
    /** The end of one atomic step (a request, a timeout, a write's completion, an unload): the events since the
     *  previous marker belong to it, and the groups as it left them are attached. */
    ObjectNode marker(String kind) {
        trackAssignments();
        ObjectNode m = events.addObject();
        m.put("t", "step");
        m.put("kind", kind);
        m.put("now", clock.nowMs);
        if (stepGroups) {
            ObjectNode groups = m.putObject("groups");
            for (String g : watched) groups.set(g, describe(g));
        }
        return m;
    }

    /** The generation each member's assignment came from (kgc's snapshot has it; Kafka's member does not): set
     *  when a leader's assignment is installed (the append callback of classicGroupSyncToClassicGroup), cleared
     *  when assignments are reset (resetAndPropagateAssignmentWithError: prepareRebalance from
     *  CompletingRebalance, a failed write), carried to a static member's new id. */
    final Map<String, Integer> assignmentGeneration = new HashMap<>();
    final Map<String, Integer> instanceGeneration = new HashMap<>();

    void trackAssignments() {
        for (String g : watched) {
            ClassicGroup group = classicGroup(g);
            if (group == null) continue;
            for (ClassicGroupMember m : group.allMembers()) {
                if (!assignmentGeneration.containsKey(m.memberId())) {
                    Integer carried = m.groupInstanceId().map(i -> instanceGeneration.get(g + "/" + i)).orElse(null);
                    assignmentGeneration.put(m.memberId(), carried == null ? -1 : carried);
                }
                m.groupInstanceId().ifPresent(i -> instanceGeneration.put(g + "/" + i, assignmentGeneration.get(m.memberId())));
            }
            // An instance id no member holds any more left the group: a later join under it starts afresh.
            Set<String> held = new TreeSet<>();
            group.allMembers().forEach(m -> m.groupInstanceId().ifPresent(i -> held.add(g + "/" + i)));
            instanceGeneration.keySet().removeIf(k -> k.startsWith(g + "/") && !held.contains(k));
        }
    }

    void setAssignmentGeneration(ClassicGroup group, int generation) {
        trackAssignments();
        for (ClassicGroupMember m : group.allMembers()) {
            assignmentGeneration.put(m.memberId(), generation);
            m.groupInstanceId().ifPresent(i -> instanceGeneration.put(group.groupId() + "/" + i, generation));
        }
    }

    // ------------------------------------------------------------------ the loop
    JsonNode handle(JsonNode r) {
        String op = r.get("op").asText();
        long id = r.path("id").asLong(-1);
        ObjectNode out = NODES.objectNode();
        switch (op) {
            case "hello":
                out.put("kafka_version", AppInfoParser.getVersion());
                out.put("harness_version", KAFKA_VERSION);
                break;
            case "configure":
                configure(r.get("props"));
                break;
            case "join":
            case "sync":
            case "heartbeat":
            case "leave":
            case "commit":
            case "fetch":
                request(op, id, r);
                break;
            case "advance": advance(r.get("ms").asLong()); break;
            case "timers": manualTimers = r.get("manual").asBoolean(); break;
            case "step_groups": stepGroups = r.get("on").asBoolean(); break;
            case "fire": fireKey(r.get("key").asText()); break;
            case "store_complete": out.setAll(storeComplete(r.get("error").asText())); break;
            case "unload": unload(r.get("group").asText()); break;
            case "mark_dead": markDead(r.get("group").asText()); break;
            case "describe": out.set("group", describe(r.get("group").asText())); break;
            case "exit": out.put("bye", true); break;
            default:
                out.put("error", "unknown op " + op);
        }
        out.put("now", clock.nowMs);
        out.set("events", events);
        events = NODES.arrayNode();
        return out;
    }

    /** Reads request lines from stdin and writes one answer line each to stdout. Answers are buffered and flushed
     *  only when no further request is waiting on stdin, so a caller that pipelines several requests (writes them
     *  all, then reads the answers: OracleProcess.call_many) pays one pipe round trip for the batch; a caller that
     *  sends one request and waits gets its answer at once (nothing else is waiting, so it is flushed). */
    public static void main(String[] args) throws Exception {
        String version = AppInfoParser.getVersion();
        PrintStream stdout = new PrintStream(new java.io.BufferedOutputStream(
            new java.io.FileOutputStream(java.io.FileDescriptor.out), 1 << 16), false, StandardCharsets.UTF_8);
        System.setOut(System.err); // nothing but protocol lines on the real stdout
        if (!KAFKA_VERSION.equals(version)) {
            stdout.println("{\"fatal\":\"kafka-oracle is written against Apache Kafka " + KAFKA_VERSION + ", found " + version + "\"}");
            stdout.flush();
            System.exit(3);
        }
        KgcOracle oracle = new KgcOracle();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            JsonNode reply;
            try {
                JsonNode request = JSON.readTree(line);
                reply = oracle.handle(request);
                if (request.path("op").asText().equals("exit")) {
                    stdout.println(JSON.writeValueAsString(reply));
                    stdout.flush();
                    break;
                }
            } catch (Throwable t) {
                ObjectNode err = NODES.objectNode();
                err.put("error", t.getClass().getSimpleName() + ": " + t.getMessage());
                err.set("events", oracle.events);
                oracle.events = NODES.arrayNode();
                reply = err;
            }
            stdout.println(JSON.writeValueAsString(reply));
            if (!in.ready()) stdout.flush();
        }
        stdout.flush();
    }
}
