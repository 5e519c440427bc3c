------------------------ MODULE KgcClassicGroupLive ------------------------
(***************************************************************************)
(* kgc's fairness classes and liveness properties (kgc/explorer/           *)
(* liveness.py FAIR_KINDS, step_class; kgc/properties/temporal.py) over    *)
(* the transcription KgcClassicGroup.tla, so that TLC can decide every     *)
(* property under each of kgc's fairness levels (none, weak, strong) and   *)
(* tests/explorer/test_tla.py can compare its verdicts with `kgc check`.   *)
(*                                                                         *)
(* What kgc counts as a behaviour, written as the antecedent Behaviour of  *)
(* every property:                                                         *)
(*  - an infinite path of kgc's state graph.  A state beyond the           *)
(*    generation bound has no successor in either tool; kgc ends every     *)
(*    path there, TLC would stutter there forever.  So only behaviours     *)
(*    that stay within the bound count ([]InBound).                        *)
(*  - kgc's graph has self-loops that are stuttering steps here (a         *)
(*    session timer finding its member alive, a Heartbeat answered NONE    *)
(*    in a Stable group).  A TLA+ behaviour may stutter forever anywhere;  *)
(*    kgc's path may stay in a state forever only along such a self-loop.  *)
(*    So a behaviour either takes infinitely many real steps or ends       *)
(*    stuttering in a state that has a self-loop in kgc (SelfLoop).        *)
(* Fairness: each kgc class is an action below; WF (weak) or SF (strong)   *)
(* on each, nothing on the unfair InitialDelayedJoin extension.  A class   *)
(* kgc takes along a self-loop is a stutter here: <<A>>_vars is then not   *)
(* enabled, which weak fairness treats alike (kgc: enabled and taken;     *)
(* here: not enabled).                                                     *)
(***************************************************************************)
EXTENDS KgcClassicGroup

InBound == grp.generation <= MaxGeneration
G(A) == InBound /\ A                 \* the fair action as Next enables it

(* Member ids a fairness condition is stated for: serial numbers up to MaxSerial; the invariant
   SerialsBounded makes TLC fail should a run reach a larger one. *)
MaxSerial == 1
MidSpace == CIdx \X (0 .. MaxSerial)
SerialsBounded ==
    \A m \in DOMAIN grp.members \cup grp.pending : m[2] <= MaxSerial

(* stalled_removal (kgc/explorer/liveness.py: stalled_clients, stall_edges).  The new-member    *)
(* timer removing a member parked in JoinGroup while another member, held by its running         *)
(* client c and not rejoined, keeps the join phase open needs c stalled past the new-member      *)
(* timeout: such a step (NeedsStall) is in no fairness class (a timely c keeps the timer from    *)
(* firing), and a behaviour takes it infinitely often only if it also removes c's held member    *)
(* by a timer infinitely often (StalledRemoval).  No step of the fault-free transcription        *)
(* removes a held member (TimerOutcome), so a fair behaviour takes a stall step finitely often.  *)
HoldsOpen(c) == \E o \in DOMAIN grp.members : o[1] = c /\ ~grp.members[o].awaitingJoin /\ o \in Held
NeedsStall(mid) ==
    /\ mid \in DOMAIN grp.members
    /\ grp.members[mid].isNew /\ grp.members[mid].awaitingJoin
    /\ \E c \in CIdx : HoldsOpen(c)
Stall(c) == HoldsOpen(c) /\ \E mid \in DOMAIN grp.members : NeedsStall(mid) /\ ExpireHeartbeatOf(mid)
TimerStep == ExpireHeartbeat \/ ExpirePending \/ ExpireJoin \/ ExpireSync \/ StoreComplete
RemovedWhileHeld(c) ==
    /\ TimerStep
    /\ \E m \in Held : m[1] = c /\ m \notin DOMAIN grp'.members \cup grp'.pending
StalledRemoval ==
    \A c \in CIdx : []<><<G(Stall(c))>>_vars => []<><<G(RemovedWhileHeld(c))>>_vars
(* What the specifications assume: StalledRemoval as it reads here, where RemovedWhileHeld(c) is  *)
(* never a step (TimerOutcome), so each pair's consequent is false and the pair says that stall   *)
(* steps stop.  One action formula: TLC expands each implication above into a disjunction, which  *)
(* doubles its liveness work per client.                                                          *)
StallsStop == <>[][\A c \in CIdx : ~G(Stall(c))]_vars

(* a session timer's fair step: its firing, unless it needs a stalled client *)
TimerOf(m) == ExpireHeartbeatOf(m) /\ ~NeedsStall(m)

WeakFairness ==
    /\ \A c \in CIdx :
        /\ WF_vars(G(SendJoin(c)))            \* join(c)
        /\ WF_vars(G(SendHeartbeat(c)))       \* heartbeat(c)
        /\ WF_vars(G(SendCommit(c)))          \* commit(c)
        /\ WF_vars(G(SendFetch(c)))           \* fetch(c)
        /\ WF_vars(G(ConsumerReceive(c)))     \* deliver(c)
    /\ \A m \in MidSpace :
        /\ WF_vars(G(TimerOf(m)))              \* session_timer(m)
        /\ WF_vars(G(ExpirePendingOf(m)))     \* pending_timer(m)
    /\ WF_vars(G(JoinTimerComplete))          \* join_timer
    /\ WF_vars(G(ExpireSync))                 \* sync_timer
    /\ WF_vars(G(StoreComplete))              \* store_callback

StrongFairness ==
    /\ \A c \in CIdx :
        /\ SF_vars(G(SendJoin(c)))
        /\ SF_vars(G(SendHeartbeat(c)))
        /\ SF_vars(G(SendCommit(c)))
        /\ SF_vars(G(SendFetch(c)))
        /\ SF_vars(G(ConsumerReceive(c)))
    /\ \A m \in MidSpace :
        /\ SF_vars(G(TimerOf(m)))
        /\ SF_vars(G(ExpirePendingOf(m)))
    /\ SF_vars(G(JoinTimerComplete))
    /\ SF_vars(G(ExpireSync))
    /\ SF_vars(G(StoreComplete))

SpecNone == Init /\ [][Next]_vars
SpecWeak == SpecNone /\ WeakFairness /\ StallsStop
SpecStrong == SpecNone /\ StrongFairness /\ StallsStop

SelfLoop ==
    /\ InBound
    /\ \/ \E mid \in DOMAIN grp.members : Alive(grp.members[mid])   \* ClassicGroupModel.timer_steps
       \/ ENABLED (Next /\ UNCHANGED vars)
Behaviour == [](InBound) /\ ([]<><<Next>>_vars \/ <>[](SelfLoop))

(* kgc/properties/temporal.py: the trigger and goal of each property (c is the consumer's index:
   c1 is 0).  A property is Behaviour => (Trigger ~> Goal), Behaviour => []<>Goal or
   Behaviour => <>[]Goal, written out
   by benchmarks/tla/kgc_tla.py (temporal_formula) for each instance: TLC 2.15 does not check a
   temporal formula built by an operator with parameters. *)
HasShare(c) ==
    LET k == cons[c]
    IN /\ k.state = "Stable" /\ grp.state = "Stable" /\ k.generation = grp.generation
       /\ k.mid \in DOMAIN grp.members /\ k.owned = grp.members[k.mid].assignment
Stopped(c) == cons[c].state = "Unjoined" /\ ~cons[c].rejoin /\ cons[c].awaiting = ""

Rebalancing == grp.state = PR                                                 \* rebalance_completes
RebalanceDone == grp.state \in {"Stable", "Empty"}
JoinInFlight(c) == cons[c].awaiting = "JoinGroup"                              \* join_answered
JoinAnswered(c) == cons[c].awaiting # "JoinGroup"
SyncInFlight(c) == cons[c].awaiting = "SyncGroup"                              \* sync_answered
SyncAnswered(c) == cons[c].awaiting # "SyncGroup"
ConsumerEventuallyStable(c) == HasShare(c) \/ Stopped(c)                       \* consumer_eventually_stable
PartitionsReowned ==                                                           \* partitions_reowned
    /\ grp.state = "Stable" /\ DOMAIN grp.members # {}
    /\ \A m \in DOMAIN grp.members : HasShare(m[1]) /\ cons[m[1]].mid = m
PendingOf(c) == \E p \in grp.pending : p[1] = c                                 \* pending_resolved
PendingResolved(c) == ~PendingOf(c)
NotRebalancing == grp.state \notin {PR, CR}                                     \* rebalancing_stops (<>[])
Owns(c) == {cons[c].owned[i] : i \in DOMAIN cons[c].owned}
Settled ==                                                                      \* group_settles (<>[])
    /\ PartitionsReowned
    /\ \A c \in CIdx : Len(cons[c].owned) = Cardinality(Owns(c))
    /\ \A c, d \in CIdx : c # d => Owns(c) \cap Owns(d) = {}
=============================================================================
