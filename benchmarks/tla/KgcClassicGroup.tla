-------------------------- MODULE KgcClassicGroup --------------------------
(***************************************************************************)
(* A transcription of kgc's FAULT-FREE model of Kafka's classic consumer   *)
(* group protocol (kgc/model/*.py), written so that TLC reaches exactly the    *)
(* distinct states `kgc check` reaches with                                *)
(*     --faults none --max-perturbations 0                                 *)
(* and the same bounds.  It is a benchmark and a cross-check of kgc's      *)
(* explorer, not a second specification: every operator names the kgc     *)
(* function it transcribes, and keeps its order of effects.                *)
(*                                                                         *)
(* Same abstraction as kgc:                                                *)
(*  - atomic requests (Config.atomic_requests): a request is handled in    *)
(*    the step that sends it; an immediate answer is read in that step,    *)
(*    and a request the reaction sends (SyncGroup after a JoinGroup        *)
(*    answer) is handled in turn.  Only answers to parked requests travel  *)
(*    on a consumer's response channel (`responses`), so the request       *)
(*    channel is always empty between steps and is not a variable here.   *)
(*  - Kafka's arbitrary choices (a new leader) are existential choices.    *)
(*  - no perturbation: with max_perturbations = 0 kgc's budget never       *)
(*    changes, no fault, leave or metadata change happens, and a timer     *)
(*    may not remove a member (or pending member id) its running consumer  *)
(*    still holds (that would be a session-expiry perturbation).  The      *)
(*    budget and the `orphan` flags (always FALSE) are therefore constant  *)
(*    and left out; a pending member id is its id alone.                   *)
(*  - the generation bound: kgc counts a state beyond max_generation but   *)
(*    does not expand it.  TLC's CONSTRAINT would not count such a state   *)
(*    at all (ModelChecker.doNext: a successor outside the constraint is   *)
(*    neither fingerprinted nor queued), so the bound is                   *)
(*    written as an enabling condition of Next instead, and TLC runs with  *)
(*    -deadlock (a state beyond the bound has no successor).               *)
(*  - a heartbeat timer firing on a live member changes nothing (a         *)
(*    self-loop in kgc); it is left out, which changes no state count.     *)
(* Identifiers: a member id is <<consumer, serial>> (kgc/model/state.py        *)
(* MemberId); member tables and plans are functions keyed by member id,    *)
(* which is kgc's tuple sorted by member id.                               *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC

CONSTANTS
    Consumers,              \* Config.consumers
    Partitions,             \* Config.partitions
    MaxGeneration,          \* Config.max_generation
    StaticConsumers,        \* Config.static_consumers
    Assignor,               \* Config.assignor: "range" or "roundrobin"
    InitialDelayZero,       \* Config.initial_delay_zero
    InitialDelayExtensible, \* Config.initial_delay_extensible
    AutoCommit,             \* Config.auto_commit
    OffsetFetch,            \* Config.offset_fetch
    JavaProfile,            \* Config.profile = "java-4.0"
    RequireKnownMemberId    \* Config.require_known_member_id (KIP-394)

VARIABLES grp, cons
vars == <<grp, cons>>

CIdx == 0 .. (Consumers - 1)
NoMember == <<-1, -1>>          \* kgc/model/state.py NO_MEMBER
NoGen == -1                     \* kgc/model/state.py NO_GENERATION
PR == "PreparingRebalance"
CR == "CompletingRebalance"
EmptyFn == [x \in {} |-> 0]

IsStatic(c) == c < StaticConsumers                      \* Config.is_static

Less(a, b) == a[1] < b[1] \/ (a[1] = b[1] /\ a[2] < b[2])
RECURSIVE Sorted(_)
Sorted(S) == IF S = {} THEN << >>
             ELSE LET m == CHOOSE x \in S : \A y \in S : x = y \/ Less(x, y)
                  IN <<m>> \o Sorted(S \ {m})
MinInt(S) == CHOOSE x \in S : \A y \in S : x <= y
Rank(m, S) == Cardinality({x \in S : Less(x, m)})

(* kgc/model/state.py Response with its defaults *)
Resp(api, err) == [api |-> api, error |-> err, mid |-> NoMember, generation |-> NoGen,
                   leader |-> NoMember, members |-> {}, assignment |-> << >>, planGen |-> NoGen]

(* kgc/model/state.py initial_group, initial_consumer *)
InitGroup == [state |-> "Empty", generation |-> 0, leader |-> NoMember, members |-> EmptyFn,
              pending |-> {}, joinTimer |-> "none", newMemberAdded |-> FALSE, stores |-> << >>,
              staleSync |-> FALSE]
InitConsumer == [state |-> "Unjoined", mid |-> NoMember, generation |-> NoGen, rejoin |-> TRUE,
                 owned |-> << >>, meta |-> 0, awaiting |-> "", responses |-> << >>]

(***************************************************************************)
(* kgc/model/assignors.py assign: the leader's plan over the member list.      *)
(***************************************************************************)
RangeParts(i, n) ==
    LET per == Partitions \div n
        extra == Partitions % n
        count == per + (IF i < extra THEN 1 ELSE 0)
        start == i * per + (IF i < extra THEN i ELSE extra)
    IN [k \in 1 .. count |-> start + k - 1]
RoundRobinParts(i, n) ==
    LET count == Cardinality({p \in 0 .. (Partitions - 1) : p % n = i})
    IN [k \in 1 .. count |-> i + (k - 1) * n]
Assign(S) ==
    [m \in S |-> IF Assignor = "range" THEN RangeParts(Rank(m, S), Cardinality(S))
                 ELSE RoundRobinParts(Rank(m, S), Cardinality(S))]

(***************************************************************************)
(* The coordinator (kgc/model/coordinator.py).  A transaction `tx` is GroupTx:  *)
(* the group `g`, the answers to parked requests in order (`parked`, each  *)
(* <<consumer, response>>), the immediate answer (`reply`, << >> or        *)
(* <<response>>) and the members the step evicted.  Every operator below   *)
(* maps a tx to the SET of its outcomes, one per combination of Kafka's    *)
(* arbitrary choices (kgc/model/actions.py enumerate_choices).                 *)
(***************************************************************************)
NewTx(g) == [g |-> g, parked |-> << >>, reply |-> << >>, evicted |-> {}]
Mids(tx) == DOMAIN tx.g.members
Park(tx, mid, r) == [tx EXCEPT !.parked = Append(@, <<mid[1], r>>)]      \* GroupTx.answer_parked
Reply(tx, r) == [tx EXCEPT !.reply = <<r>>]                               \* GroupTx.respond
Then(T, Op(_)) == UNION {Op(t) : t \in T}

StaticHolders(g, c) == {m \in DOMAIN g.members : g.members[m].static /\ m[1] = c}  \* GroupTx.static_member

(* GroupTx.validate_member: "OK" or the error *)
Validate(g, c, mid) ==
    IF IsStatic(c)
    THEN LET h == StaticHolders(g, c)
         IN IF h = {} THEN "UNKNOWN_MEMBER_ID" ELSE IF mid \in h THEN "OK" ELSE "FENCED_INSTANCE_ID"
    ELSE IF mid \in DOMAIN g.members THEN "OK" ELSE "UNKNOWN_MEMBER_ID"

AllJoined(tx) == tx.g.pending = {} /\ \A m \in Mids(tx) : tx.g.members[m].awaitingJoin  \* all_members_joined

(* GroupTx.fresh_member_id *)
FreshId(g, c, inUse) ==
    LET planMids == UNION {DOMAIN g.stores[i].plan : i \in DOMAIN g.stores}
        used == {x[2] : x \in {y \in (DOMAIN g.members \cup g.pending \cup planMids \cup inUse) : y[1] = c}}
    IN <<c, MinInt({s \in 0 .. Cardinality(used) : s \notin used})>>

(* GroupTx.propagate_assignment *)
RECURSIVE PropagateSeq(_, _, _)
PropagateSeq(tx, err, ms) ==
    IF ms = << >> THEN tx
    ELSE LET mid == Head(ms)
             m == tx.g.members[mid]
             ok == err = "NONE"
             r == [Resp("SyncGroup", err) EXCEPT !.mid = mid, !.generation = tx.g.generation,
                      !.assignment = IF ok THEN m.assignment ELSE << >>,
                      !.planGen = IF ok THEN m.assignmentGen ELSE NoGen]
             tx2 == IF m.awaitingSync
                    THEN [Park(tx, mid, r) EXCEPT !.g.members[mid].awaitingSync = FALSE]
                    ELSE tx
         IN PropagateSeq(tx2, err, Tail(ms))
Propagate(tx, err) == PropagateSeq(tx, err, Sorted(Mids(tx)))

(* GroupTx.reset_and_propagate_assignment_error *)
ResetAndPropagateError(tx, err) ==
    LET ms == tx.g.members
    IN Propagate([tx EXCEPT !.g.members =
                     [m \in DOMAIN ms |-> [ms[m] EXCEPT !.assignment = << >>, !.assignmentGen = NoGen]]], err)

(* GroupTx.set_and_propagate_assignment *)
SetAndPropagate(tx, store) ==
    LET ms == tx.g.members
    IN Propagate([tx EXCEPT !.g.members =
                     [m \in DOMAIN ms |-> [ms[m] EXCEPT
                         !.assignment = IF m \in DOMAIN store.plan THEN store.plan[m] ELSE << >>,
                         !.assignmentGen = store.generation]]], "NONE")

(* The answers of GroupTx.on_complete_join, in member-id order *)
RECURSIVE AnswerJoins(_, _, _)
AnswerJoins(tx, everyone, ms) ==
    IF ms = << >> THEN tx
    ELSE LET mid == Head(ms)
             m == tx.g.members[mid]
             r == [Resp("JoinGroup", "NONE") EXCEPT !.mid = mid, !.generation = tx.g.generation,
                      !.leader = tx.g.leader, !.members = IF mid = tx.g.leader THEN everyone ELSE {}]
             tx2 == IF m.awaitingJoin THEN Park(tx, mid, r) ELSE tx
             tx3 == [tx2 EXCEPT !.g.members[mid].awaitingJoin = FALSE, !.g.members[mid].isNew = FALSE,
                                !.g.members[mid].pendingSync = TRUE]
         IN AnswerJoins(tx3, everyone, Tail(ms))

(* GroupTx.on_complete_join *)
OnCompleteJoin(tx0) ==
    LET tx1 == [tx0 EXCEPT !.g.joinTimer = "none", !.g.newMemberAdded = FALSE]
        ms == tx1.g.members
        absent == {m \in DOMAIN ms : ~ms[m].awaitingJoin /\ ~IsStatic(m[1])}
        kept == DOMAIN ms \ absent
        tx2 == [tx1 EXCEPT !.evicted = @ \cup absent, !.g.members = [m \in kept |-> ms[m]]]
        joined == {m \in kept : ms[m].awaitingJoin}
        ldr == tx2.g.leader
    IN IF kept # {} /\ joined = {}
       THEN IF ldr \notin kept
            THEN {[tx2 EXCEPT !.g.leader = l, !.g.joinTimer = "DelayedJoin"] : l \in kept}
            ELSE {[tx2 EXCEPT !.g.joinTimer = "DelayedJoin"]}
       ELSE LET leaders == IF ldr \notin kept \/ ~ms[ldr].awaitingJoin
                           THEN (IF joined = {} THEN {NoMember} ELSE joined)
                           ELSE {ldr}
                Complete(t) == IF kept = {} THEN [t EXCEPT !.g.state = "Empty"]
                               ELSE AnswerJoins([t EXCEPT !.g.state = CR], kept, Sorted(kept))
            IN {Complete([tx2 EXCEPT !.g.leader = l, !.g.generation = @ + 1, !.g.staleSync = FALSE])
                : l \in leaders}

(* GroupTx.try_complete_join *)
TryCompleteJoin(tx) ==
    IF tx.g.state = PR /\ tx.g.joinTimer = "DelayedJoin" /\ AllJoined(tx) THEN OnCompleteJoin(tx) ELSE {tx}

(* GroupTx.try_complete_join_after_expiry *)
TryCompleteJoinAfterExpiry(tx) ==
    IF JavaProfile /\ tx.g.state = PR /\ tx.g.joinTimer = "InitialDelayedJoin" /\ AllJoined(tx)
    THEN OnCompleteJoin(tx) ELSE TryCompleteJoin(tx)

(* GroupTx.prepare_rebalance *)
PrepareRebalance(tx0) ==
    LET tx1 == IF tx0.g.state = CR THEN ResetAndPropagateError(tx0, "REBALANCE_IN_PROGRESS") ELSE tx0
        ms == tx1.g.members
        initial == tx0.g.state = "Empty"
        tx2 == [tx1 EXCEPT !.g.members = [m \in DOMAIN ms |-> [ms[m] EXCEPT !.pendingSync = FALSE]],
                           !.g.joinTimer = IF initial THEN "InitialDelayedJoin" ELSE "DelayedJoin",
                           !.g.state = PR, !.g.staleSync = FALSE]
    IN IF ~initial THEN TryCompleteJoin(tx2)
       ELSE IF InitialDelayZero THEN OnCompleteJoin(tx2)   \* expire_initial_delayed_join(extend=False)
       ELSE {tx2}

(* GroupTx.maybe_prepare_rebalance *)
MaybePrepareRebalance(tx) ==
    IF tx.g.state \in {"Stable", CR, "Empty"} THEN PrepareRebalance(tx) ELSE {tx}

(* GroupTx.remove_member: a removed leader is replaced by an arbitrary remaining member *)
RemoveMember(tx, mid) ==
    LET rest == Mids(tx) \ {mid}
        tx1 == [tx EXCEPT !.g.members = [m \in rest |-> tx.g.members[m]]]
    IN IF tx.g.leader # mid THEN {tx1}
       ELSE IF rest = {} THEN {[tx1 EXCEPT !.g.leader = NoMember]}
       ELSE {[tx1 EXCEPT !.g.leader = l] : l \in rest}

(* GroupTx.remove_member_and_update_group *)
RemoveMemberAndUpdateGroup(tx, mid) ==
    LET tx1 == IF tx.g.members[mid].awaitingJoin THEN Park(tx, mid, Resp("JoinGroup", "UNKNOWN_MEMBER_ID")) ELSE tx
        After(t) == IF t.g.state \in {"Stable", CR} THEN PrepareRebalance(t)
                    ELSE IF t.g.state = PR THEN TryCompleteJoinAfterExpiry(t)
                    ELSE {t}
    IN Then(RemoveMember(tx1, mid), After)

(* GroupTx.add_member_and_rebalance *)
AddMemberAndRebalance(tx, mid, meta, static) ==
    LET extends == tx.g.state = PR /\ (IF JavaProfile THEN tx.g.joinTimer = "InitialDelayedJoin"
                                      ELSE tx.g.generation = 0)
        rec == [meta |-> meta, awaitingJoin |-> TRUE, awaitingSync |-> FALSE, isNew |-> TRUE,
                pendingSync |-> FALSE, assignment |-> << >>, assignmentGen |-> NoGen, static |-> static]
    IN MaybePrepareRebalance([tx EXCEPT !.g.newMemberAdded = IF extends THEN TRUE ELSE @,
                                        !.g.members = (mid :> rec) @@ @,
                                        !.g.leader = IF @ = NoMember THEN mid ELSE @])

(* GroupTx.update_member_and_rebalance *)
UpdateMemberAndRebalance(tx, mid, meta) ==
    MaybePrepareRebalance([tx EXCEPT !.g.members[mid].meta = meta, !.g.members[mid].awaitingJoin = TRUE])

(* _current_join_response *)
CurrentJoinResponse(tx, mid) ==
    [Resp("JoinGroup", "NONE") EXCEPT !.mid = mid, !.generation = tx.g.generation, !.leader = tx.g.leader,
        !.members = IF mid = tx.g.leader THEN Mids(tx) ELSE {}]

(* The end of handle_join_group for a parked JoinGroup: try to complete the join phase *)
AfterJoin(T) == Then(T, LAMBDA t : IF t.g.state = PR THEN TryCompleteJoin(t) ELSE {t})

(* update_static_member_and_rebalance (then the end of handle_join_group when parked) *)
UpdateStatic(tx, old, new, meta) ==
    LET curLeader == tx.g.leader
        m == tx.g.members[old]
        t1 == IF m.awaitingJoin
              THEN Park(tx, old, [Resp("JoinGroup", "FENCED_INSTANCE_ID") EXCEPT !.mid = old]) ELSE tx
        t2 == IF m.awaitingSync THEN Park(t1, old, Resp("SyncGroup", "FENCED_INSTANCE_ID")) ELSE t1
        rest == Mids(t2) \ {old}
        \* replaceStaticMember keeps the old id's pendingSyncMembers entry (a stale one)
        t3 == [t2 EXCEPT !.g.members = (new :> [m EXCEPT !.meta = meta, !.awaitingJoin = TRUE,
                                                          !.awaitingSync = FALSE, !.pendingSync = FALSE])
                                       @@ [x \in rest |-> t2.g.members[x]],
                         !.g.leader = IF @ = old THEN new ELSE @,
                         !.g.staleSync = @ \/ m.pendingSync]
    IN IF t3.g.state = "Stable"
       THEN LET t4 == [t3 EXCEPT !.g.members[new].awaitingJoin = FALSE]
            IN {Reply(t4, [CurrentJoinResponse(t4, new) EXCEPT !.leader = curLeader, !.members = {}])}
       ELSE IF t3.g.state = CR THEN AfterJoin(PrepareRebalance(t3))
       ELSE AfterJoin({t3})

(* handle_join_group *)
HandleJoin(tx, c, req, inUse) ==
    LET holders == StaticHolders(tx.g, c)
    IN IF req.mid = NoMember /\ IsStatic(c)
       THEN LET mid == FreshId(tx.g, c, inUse \cup holders)
            IN IF holders = {} THEN AfterJoin(AddMemberAndRebalance(tx, mid, req.meta, TRUE))
               ELSE UpdateStatic(tx, CHOOSE h \in holders : TRUE, mid, req.meta)
       ELSE IF req.mid = NoMember /\ RequireKnownMemberId
       THEN LET new == FreshId(tx.g, c, inUse)   \* KIP-394: hand out an id, remember it as pending
            IN {Reply([tx EXCEPT !.g.pending = @ \cup {new}],
                      [Resp("JoinGroup", "MEMBER_ID_REQUIRED") EXCEPT !.mid = new])}
       ELSE IF req.mid = NoMember
       THEN AfterJoin(AddMemberAndRebalance(tx, FreshId(tx.g, c, inUse), req.meta, FALSE))
       ELSE IF req.mid \in tx.g.pending
       THEN AfterJoin(AddMemberAndRebalance([tx EXCEPT !.g.pending = @ \ {req.mid}], req.mid, req.meta, FALSE))
       ELSE LET inv == Validate(tx.g, c, req.mid)
            IN IF inv # "OK" THEN {Reply(tx, Resp("JoinGroup", inv))}
               ELSE LET member == tx.g.members[req.mid]
                        update == AfterJoin(UpdateMemberAndRebalance(tx, req.mid, req.meta))
                        current == {Reply(tx, CurrentJoinResponse(tx, req.mid))}
                    IN CASE tx.g.state = PR -> update
                         [] tx.g.state = CR -> IF member.meta = req.meta THEN current ELSE update
                         [] tx.g.state = "Stable" ->
                                IF tx.g.leader = req.mid \/ member.meta # req.meta THEN update ELSE current
                         [] OTHER -> {Reply(tx, Resp("JoinGroup", "UNKNOWN_MEMBER_ID"))}

(* _assignment_response *)
AssignmentResponse(tx, mid, member) ==
    [Resp("SyncGroup", "NONE") EXCEPT !.mid = mid, !.generation = tx.g.generation,
        !.assignment = member.assignment, !.planGen = member.assignmentGen]

(* handle_sync_group *)
HandleSync(tx, c, req) ==
    LET inv == Validate(tx.g, c, req.mid)
    IN IF inv # "OK" THEN {Reply(tx, Resp("SyncGroup", inv))}
       ELSE IF req.generation # tx.g.generation THEN {Reply(tx, Resp("SyncGroup", "ILLEGAL_GENERATION"))}
       ELSE LET member == tx.g.members[req.mid]
            IN CASE tx.g.state = PR -> {Reply(tx, Resp("SyncGroup", "REBALANCE_IN_PROGRESS"))}
                 [] tx.g.state = CR ->
                      LET t1 == [tx EXCEPT !.g.members[req.mid].awaitingSync = TRUE,
                                           !.g.members[req.mid].pendingSync = FALSE]
                          plan == [m \in Mids(tx) |-> IF m \in DOMAIN req.plan THEN req.plan[m] ELSE << >>]
                      IN IF tx.g.leader = req.mid
                         THEN {[t1 EXCEPT !.g.stores = Append(@, [generation |-> tx.g.generation, plan |-> plan])]}
                         ELSE {t1}
                 [] tx.g.state = "Stable" ->
                      {Reply([tx EXCEPT !.g.members[req.mid].pendingSync = FALSE],
                             AssignmentResponse(tx, req.mid, member))}
                 [] OTHER -> {Reply(tx, Resp("SyncGroup", "UNKNOWN_MEMBER_ID"))}

(* handle_heartbeat *)
HandleHeartbeat(tx, c, req) ==
    LET inv == Validate(tx.g, c, req.mid)
    IN {Reply(tx, Resp("Heartbeat",
            IF inv # "OK" THEN inv
            ELSE IF req.generation # tx.g.generation THEN "ILLEGAL_GENERATION"
            ELSE IF tx.g.state = "Empty" THEN "UNKNOWN_MEMBER_ID"
            ELSE IF tx.g.state = PR THEN "REBALANCE_IN_PROGRESS"
            ELSE "NONE"))}

(* handle_commit_offsets *)
HandleCommit(tx, c, req) ==
    LET inv == Validate(tx.g, c, req.mid)
    IN {Reply(tx,
            IF req.generation < 0 /\ tx.g.state = "Empty" THEN Resp("OffsetCommit", "NONE")
            ELSE IF inv # "OK" THEN Resp("OffsetCommit", inv)
            ELSE IF req.generation # tx.g.generation THEN Resp("OffsetCommit", "ILLEGAL_GENERATION")
            ELSE IF tx.g.state = CR THEN Resp("OffsetCommit", "REBALANCE_IN_PROGRESS")
            ELSE [Resp("OffsetCommit", "NONE") EXCEPT !.mid = req.mid, !.generation = tx.g.generation])}

(* handle_request (the group is never Dead without the unload fault) *)
HandleRequest(tx, c, req, inUse) ==
    CASE req.api = "JoinGroup" -> HandleJoin(tx, c, req, inUse)
      [] req.api = "SyncGroup" -> HandleSync(tx, c, req)
      [] req.api = "Heartbeat" -> HandleHeartbeat(tx, c, req)
      [] req.api = "OffsetCommit" -> HandleCommit(tx, c, req)
      [] req.api = "OffsetFetch" -> {Reply(tx, Resp("OffsetFetch", "NONE"))}

(* member_is_alive *)
Alive(m) == ~m.isNew /\ (m.awaitingJoin \/ m.awaitingSync)

(***************************************************************************)
(* The consumer (kgc/model/consumer.py).  A reaction is [c |-> consumer,       *)
(* req |-> << >> or <<request>>]: the request it queued, if any.           *)
(***************************************************************************)
Req(api, mid, gen) == [api |-> api, mid |-> mid, generation |-> gen, meta |-> 0, plan |-> EmptyFn]
NoSend(k) == [c |-> k, req |-> << >>]
Send(k, r) == [c |-> [k EXCEPT !.awaiting = r.api], req |-> <<r>>]           \* _send

(* _reset *)
ResetGen(k, resetMid) ==
    [k EXCEPT !.state = "Unjoined", !.mid = IF resetMid THEN NoMember ELSE @, !.generation = NoGen,
              !.owned = << >>, !.rejoin = TRUE]

(* _on_join_response *)
OnJoinResponse(k, r) ==
    IF r.error = "NONE"
    THEN LET plan == IF r.leader = r.mid THEN Assign(r.members) ELSE EmptyFn
         IN Send([k EXCEPT !.mid = r.mid, !.generation = r.generation, !.state = "Rebalancing", !.rejoin = FALSE],
                 [Req("SyncGroup", r.mid, r.generation) EXCEPT !.plan = plan])
    ELSE IF r.error = "MEMBER_ID_REQUIRED"     \* KIP-394: rejoin at once with the id handed out
    THEN Send([k EXCEPT !.mid = r.mid], [Req("JoinGroup", r.mid, NoGen) EXCEPT !.meta = k.meta])
    ELSE IF r.error = "UNKNOWN_MEMBER_ID" THEN NoSend(ResetGen(k, TRUE))
    ELSE NoSend([k EXCEPT !.rejoin = TRUE])

(* receive: the answer at the head of the response channel *)
Receive(k0) ==
    LET r == Head(k0.responses)
        k == [k0 EXCEPT !.responses = Tail(@), !.awaiting = ""]
        err == r.error
    IN IF err = "FENCED_INSTANCE_ID"           \* fenced
       THEN NoSend([k EXCEPT !.state = "Unjoined", !.mid = NoMember, !.generation = NoGen, !.owned = << >>,
                             !.rejoin = FALSE])
       ELSE CASE r.api = "JoinGroup" -> OnJoinResponse(k, r)
              [] r.api = "SyncGroup" ->
                   NoSend(IF err = "NONE" THEN [k EXCEPT !.state = "Stable", !.owned = r.assignment]
                          ELSE IF err = "UNKNOWN_MEMBER_ID" THEN ResetGen(k, TRUE)
                          ELSE IF err = "ILLEGAL_GENERATION" THEN ResetGen(k, FALSE)
                          ELSE [k EXCEPT !.rejoin = TRUE, !.state = "Rebalancing"])
              [] r.api \in {"Heartbeat", "OffsetCommit"} ->
                   NoSend(IF err = "REBALANCE_IN_PROGRESS" THEN [k EXCEPT !.rejoin = TRUE]
                          ELSE IF err = "UNKNOWN_MEMBER_ID" THEN ResetGen(k, TRUE)
                          ELSE IF err = "ILLEGAL_GENERATION" THEN ResetGen(k, FALSE)
                          ELSE k)
              [] OTHER -> NoSend(k)

(***************************************************************************)
(* kgc/model/system.py ClassicGroupModel.round_trip / _continue: the           *)
(* coordinator handles the request the consumer just queued; an immediate  *)
(* answer is appended to its response channel and the head is read at     *)
(* once, and a request the reaction queues is handled in turn.  The        *)
(* outcome is [g |-> group, c |-> consumer, parked |-> answers to deliver]. *)
(***************************************************************************)
RECURSIVE RoundTrip(_, _, _, _)
RoundTrip(g, c, k, req) ==
    Then(HandleRequest(NewTx(g), c, req, {k.mid}),
         LAMBDA t :
            IF t.reply = << >> THEN {[g |-> t.g, c |-> k, parked |-> t.parked]}
            ELSE LET rd == Receive([k EXCEPT !.responses = Append(@, t.reply[1])])
                 IN IF rd.req = << >> THEN {[g |-> t.g, c |-> rd.c, parked |-> t.parked]}
                    ELSE {[o EXCEPT !.parked = t.parked \o @] : o \in RoundTrip(t.g, c, rd.c, Head(rd.req))})

(* ClassicGroupModel.deliver: append each delivered answer to its consumer's response channel *)
RECURSIVE Deliver(_, _)
Deliver(cs, ds) ==
    IF ds = << >> THEN cs
    ELSE Deliver([cs EXCEPT ![Head(ds)[1]].responses = Append(@, Head(ds)[2])], Tail(ds))

(* A consumer move (ClassicGroupModel.consumer_steps with atomic requests) *)
Move(c, rc) ==
    IF rc.req = << >>
    THEN grp' = grp /\ cons' = [cons EXCEPT ![c] = rc.c]
    ELSE \E o \in RoundTrip(grp, c, rc.c, Head(rc.req)) :
            /\ grp' = o.g
            /\ cons' = Deliver([cons EXCEPT ![c] = o.c], o.parked)

(* consumer_steps: receive *)
ConsumerReceive(c) ==
    /\ cons[c].responses # << >>
    /\ Move(c, Receive(cons[c]))

(* consumer_steps: send_join (onJoinPrepare revokes every owned partition) *)
SendJoin(c) ==
    LET k == cons[c]
    IN /\ k.awaiting = "" /\ k.rejoin
       /\ Move(c, Send([k EXCEPT !.owned = << >>, !.state = "Rebalancing"],
                       [Req("JoinGroup", k.mid, NoGen) EXCEPT !.meta = k.meta]))

(* consumer_steps: the heartbeat thread, auto-commit and offset fetch of a stable member *)
(* (one operator per kind: each is its own fairness class in KgcClassicGroupLive.tla) *)
StableIdle(c) == cons[c].awaiting = "" /\ ~cons[c].rejoin /\ cons[c].state = "Stable"
SendHeartbeat(c) ==
    StableIdle(c) /\ Move(c, Send(cons[c], Req("Heartbeat", cons[c].mid, cons[c].generation)))
SendCommit(c) ==
    /\ StableIdle(c) /\ AutoCommit /\ cons[c].owned # << >>
    /\ Move(c, Send(cons[c], Req("OffsetCommit", cons[c].mid, cons[c].generation)))
SendFetch(c) ==
    /\ StableIdle(c) /\ OffsetFetch /\ cons[c].owned # << >>
    /\ Move(c, Send(cons[c], Req("OffsetFetch", cons[c].mid, cons[c].generation)))
SendStable(c) == SendHeartbeat(c) \/ SendCommit(c) \/ SendFetch(c)

(***************************************************************************)
(* The coordinator's timers and storage callback (ClassicGroupModel.        *)
(* timer_steps).  Without a session-expiry budget, a step that removes a   *)
(* member its running consumer holds (live_candidates, holds: the          *)
(* consumer's member id is that member's or, while it knows none, a        *)
(* JoinGroup answer on its way to it carries that id: ClassicGroupModel.   *)
(* holder) is not a step at all: neither through the step's evictions     *)
(* nor, for a forced join completion, by leaving a static member behind    *)
(* (_left_behind).                                                         *)
(***************************************************************************)
Holder(k) ==
    IF k.mid # NoMember THEN k.mid
    ELSE LET ids == {i \in 1..Len(k.responses) :
                        /\ k.responses[i].api = "JoinGroup" /\ k.responses[i].mid # NoMember
                        /\ k.responses[i].error \in {"NONE", "MEMBER_ID_REQUIRED"}}
         IN IF ids = {} THEN NoMember ELSE k.responses[CHOOSE i \in ids : \A j \in ids : i <= j].mid
Held == {m \in DOMAIN grp.members \cup grp.pending : Holder(cons[m[1]]) = m}

TimerOutcome(t, leftBehind) ==
    /\ (t.evicted \cup leftBehind) \cap Held = {}
    /\ grp' = t.g
    /\ cons' = Deliver(cons, t.parked)

(* expire_heartbeat on a member that is not alive *)
ExpireHeartbeatOf(mid) ==
    /\ mid \in DOMAIN grp.members
    /\ ~Alive(grp.members[mid])
    /\ \E t \in RemoveMemberAndUpdateGroup([NewTx(grp) EXCEPT !.evicted = {mid}], mid) : TimerOutcome(t, {})
ExpireHeartbeat == \E mid \in DOMAIN grp.members : ExpireHeartbeatOf(mid)

(* expire_pending: a pending member id's timer fires *)
ExpirePendingOf(mid) ==
    /\ mid \in grp.pending
    /\ LET t == [NewTx(grp) EXCEPT !.g.pending = @ \ {mid}, !.evicted = {mid}]
       IN \E t2 \in (IF t.g.state = PR THEN TryCompleteJoinAfterExpiry(t) ELSE {t}) : TimerOutcome(t2, {})
ExpirePending == \E mid \in grp.pending : ExpirePendingOf(mid)

(* _left_behind *)
LeftBehind(t) ==
    IF t.g.generation = grp.generation THEN {}
    ELSE {m \in DOMAIN grp.members : ~grp.members[m].awaitingJoin /\ m \in DOMAIN t.g.members}

(* expire_join: a DelayedJoin completes the phase; an InitialDelayedJoin extends or completes *)
(* (completing is fair in kgc; extending, a perturbation-like choice, is in no fairness class) *)
JoinTimerComplete ==
    /\ grp.joinTimer \in {"DelayedJoin", "InitialDelayedJoin"}
    /\ \E t \in OnCompleteJoin(NewTx(grp)) : TimerOutcome(t, LeftBehind(t))
JoinTimerExtend ==
    /\ grp.joinTimer = "InitialDelayedJoin" /\ grp.newMemberAdded /\ InitialDelayExtensible
    /\ TimerOutcome([NewTx(grp) EXCEPT !.g.newMemberAdded = FALSE], {})
ExpireJoin == JoinTimerComplete \/ JoinTimerExtend

(* expire_sync: members that never sent SyncGroup are removed, then a rebalance *)
RECURSIVE RemoveAll(_, _)
RemoveAll(T, ms) == IF ms = << >> THEN T ELSE RemoveAll(Then(T, LAMBDA t : RemoveMember(t, Head(ms))), Tail(ms))
ExpireSync ==
    LET pending == {m \in DOMAIN grp.members : grp.members[m].pendingSync}
    IN /\ grp.state \in {CR, "Stable"}
       /\ (pending # {} \/ grp.staleSync)
       /\ \E t \in Then(RemoveAll({[NewTx(grp) EXCEPT !.evicted = pending]}, Sorted(pending)), PrepareRebalance) :
              TimerOutcome(t, {})

(* store_callback(ok=True): the oldest plan write completes *)
StoreComplete ==
    /\ grp.stores # << >>
    /\ LET st == Head(grp.stores)
           t1 == [NewTx(grp) EXCEPT !.g.stores = Tail(@)]
       IN TimerOutcome(IF t1.g.state = CR /\ t1.g.generation = st.generation
                       THEN [SetAndPropagate(t1, st) EXCEPT !.g.state = "Stable"]
                       ELSE t1, {})

Init == grp = InitGroup /\ cons = [c \in CIdx |-> InitConsumer]

(* ClassicGroupModel.successor_keys; key_within_boundary as an enabling condition *)
Next ==
    /\ grp.generation <= MaxGeneration
    /\ \/ \E c \in CIdx : ConsumerReceive(c) \/ SendJoin(c) \/ SendStable(c)
       \/ ExpireHeartbeat
       \/ ExpirePending
       \/ ExpireJoin
       \/ ExpireSync
       \/ StoreComplete

Spec == Init /\ [][Next]_vars
=============================================================================
