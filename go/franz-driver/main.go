// Command franz-driver is one consumer application around franz-go's group consumer
// (github.com/twmb/franz-go/pkg/kgo), driven over stdin and reporting on stdout with kgc's client
// driver protocol, the one kgc/harness/clients/worker.py speaks for the Python libraries.
//
// Usage: franz-driver CONFIG_JSON. The config names the bootstrap address, group, topic, client
// name, timeouts, the balancer ("assignment": eager is kgo.RangeBalancer, roundrobin
// kgo.RoundRobinBalancer, cooperative kgo.CooperativeStickyBalancer, franz-go's default),
// auto-commit, and optionally group_instance_id (static membership, KIP-345).
//
// Commands, one JSON object per line: set (poll_ms, process_ms, commit), stall (ms: the next batch
// takes that long), commit (mode sync|async: once after the current batch), close. Events, one
// JSON object per line, each with t, CLOCK_MONOTONIC in seconds (the clock Python's
// time.monotonic() reads): started, assigned, revoked, lost, stalled, processed, committed, error,
// closed. The application processes a batch completely before it polls again and commits only
// what it processed.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var outMu sync.Mutex

// monotonic reads CLOCK_MONOTONIC (Go's time package keeps its monotonic reading private).
func monotonic() float64 {
	var ts syscall.Timespec
	const clockMonotonic = 1
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}

// emit writes one event line, flushed at once (the harness orders events by their t).
func emit(kind string, fields map[string]any) {
	event := map[string]any{"kind": kind, "t": monotonic()}
	for k, v := range fields {
		event[k] = v
	}
	line, err := json.Marshal(event)
	if err != nil {
		line = []byte(fmt.Sprintf(`{"kind": "error", "t": %f, "error": %q}`, monotonic(), err.Error()))
	}
	outMu.Lock()
	defer outMu.Unlock()
	os.Stdout.Write(append(line, '\n'))
}

type config struct {
	Library              string `json:"library"`
	Bootstrap            string `json:"bootstrap"`
	Group                string `json:"group"`
	Topic                string `json:"topic"`
	Name                 string `json:"name"`
	SessionTimeoutMs     int    `json:"session_timeout_ms"`
	HeartbeatIntervalMs  int    `json:"heartbeat_interval_ms"`
	MaxPollIntervalMs    int    `json:"max_poll_interval_ms"`
	AutoCommit           bool   `json:"auto_commit"`
	AutoCommitIntervalMs int    `json:"auto_commit_interval_ms"`
	Commit               string `json:"commit"`
	PollMs               int    `json:"poll_ms"`
	ProcessMs            int    `json:"process_ms"`
	Assignment           string `json:"assignment"`
	GroupInstanceID      string `json:"group_instance_id"`
}

type command struct {
	Op        string `json:"op"`
	PollMs    *int   `json:"poll_ms"`
	ProcessMs *int   `json:"process_ms"`
	Commit    string `json:"commit"`
	Ms        int    `json:"ms"`
	Mode      string `json:"mode"`
}

// loop holds the application loop's parameters, changed by commands read on a goroutine.
type loop struct {
	pollMs, processMs, stallMs int
	commit, commitOnce         string
	closing                    bool
	commands                   chan command
}

func newLoop(c config) *loop {
	l := &loop{pollMs: c.PollMs, processMs: c.ProcessMs, commit: c.Commit, commands: make(chan command, 256)}
	if l.pollMs == 0 {
		l.pollMs = 200
	}
	if l.commit == "" {
		l.commit = "none"
	}
	go func() {
		scanner := bufio.NewScanner(os.Stdin)
		for scanner.Scan() {
			var cmd command
			if len(scanner.Bytes()) == 0 {
				continue
			}
			if err := json.Unmarshal(scanner.Bytes(), &cmd); err != nil {
				emit("error", map[string]any{"error": "commands: " + err.Error()})
				continue
			}
			l.commands <- cmd
		}
		l.commands <- command{Op: "close"} // the driver went away
	}()
	return l
}

func (l *loop) applyCommands() {
	for {
		select {
		case cmd := <-l.commands:
			switch cmd.Op {
			case "set":
				if cmd.PollMs != nil {
					l.pollMs = *cmd.PollMs
				}
				if cmd.ProcessMs != nil {
					l.processMs = *cmd.ProcessMs
				}
				if cmd.Commit != "" {
					l.commit = cmd.Commit
				}
			case "stall":
				l.stallMs = cmd.Ms
			case "commit":
				l.commitOnce = cmd.Mode
			case "close":
				l.closing = true
			default:
				emit("error", map[string]any{"error": "unknown command " + cmd.Op})
			}
		default:
			return
		}
	}
}

// batchMs is how long processing the next batch takes; a stall applies once and is reported when
// it starts.
func (l *loop) batchMs() int {
	if l.stallMs > 0 {
		ms := l.stallMs
		l.stallMs = 0
		emit("stalled", map[string]any{"ms": ms})
		return ms
	}
	return l.processMs
}

func (l *loop) commitMode() string {
	once := l.commitOnce
	l.commitOnce = ""
	if once != "" {
		return once
	}
	if l.commit == "none" {
		return ""
	}
	return l.commit
}

func partitions(m map[string][]int32, topic string) []int {
	out := []int{}
	for _, p := range m[topic] {
		out = append(out, int(p))
	}
	sort.Ints(out)
	return out
}

func balancer(assignment string) (kgo.GroupBalancer, error) {
	switch assignment {
	case "eager", "":
		return kgo.RangeBalancer(), nil
	case "roundrobin":
		return kgo.RoundRobinBalancer(), nil
	case "cooperative":
		return kgo.CooperativeStickyBalancer(), nil
	}
	return nil, fmt.Errorf("unknown assignment %q", assignment)
}

func franzVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/twmb/franz-go" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

// state is what the application knows: the partitions it owns (from the callbacks, which franz-go
// runs on its group goroutine) and the offsets it has processed.
type state struct {
	mu        sync.Mutex
	owned     map[int32]bool
	processed map[int32]int64
}

func (s *state) offsetsOf(topic string, only map[int32]bool) (map[string]map[int32]kgo.EpochOffset, [][2]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int32]kgo.EpochOffset{}
	shown := [][2]int64{}
	for p, o := range s.processed {
		if s.owned[p] && (only == nil || only[p]) {
			out[p] = kgo.EpochOffset{Epoch: -1, Offset: o}
			shown = append(shown, [2]int64{int64(p), o})
		}
	}
	sort.Slice(shown, func(i, j int) bool { return shown[i][0] < shown[j][0] })
	if len(out) == 0 {
		return nil, shown
	}
	return map[string]map[int32]kgo.EpochOffset{topic: out}, shown
}

// commitError is the first error of a commit: the request's or a partition's.
func commitError(resp *kmsg.OffsetCommitResponse, err error) error {
	if err != nil {
		return err
	}
	if resp != nil {
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if perr := kerr.ErrorForCode(p.ErrorCode); perr != nil {
					return perr
				}
			}
		}
	}
	return nil
}

func run(c config, l *loop) error {
	b, err := balancer(c.Assignment)
	if err != nil {
		return err
	}
	st := &state{owned: map[int32]bool{}, processed: map[int32]int64{}}
	var client *kgo.Client
	onRevoked := func(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
		parts := partitions(revoked, c.Topic)
		// franz-go's default revoke callback commits what was polled when auto-commit is on; an
		// application that installs its own, as this one does, commits itself: what it processed
		// of the partitions it gives up, synchronously (as ConsumerCoordinator.onJoinPrepare does
		// for Java's auto-commit)
		if c.AutoCommit && len(parts) > 0 {
			only := map[int32]bool{}
			for _, p := range parts {
				only[int32(p)] = true
			}
			if offsets, _ := st.offsetsOf(c.Topic, only); offsets != nil {
				cl.CommitOffsetsSync(cl.Context(), offsets, nil)
			}
		}
		emit("revoked", map[string]any{"partitions": parts})
		st.mu.Lock()
		for _, p := range parts {
			delete(st.owned, int32(p))
		}
		st.mu.Unlock()
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Bootstrap),
		kgo.ClientID(c.Name),
		kgo.ConsumerGroup(c.Group),
		kgo.ConsumeTopics(c.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.Balancers(b),
		kgo.SessionTimeout(time.Duration(c.SessionTimeoutMs) * time.Millisecond),
		kgo.HeartbeatInterval(time.Duration(c.HeartbeatIntervalMs) * time.Millisecond),
		// JoinGroup's rebalance timeout: Java sends max.poll.interval.ms there
		kgo.RebalanceTimeout(time.Duration(c.MaxPollIntervalMs) * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.MetadataMaxAge(time.Second),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
			parts := partitions(assigned, c.Topic)
			st.mu.Lock()
			for _, p := range parts {
				st.owned[int32(p)] = true
			}
			st.mu.Unlock()
			emit("assigned", map[string]any{"partitions": parts})
		}),
		kgo.OnPartitionsRevoked(onRevoked),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
			parts := partitions(lost, c.Topic)
			st.mu.Lock()
			for _, p := range parts {
				delete(st.owned, int32(p))
			}
			st.mu.Unlock()
			emit("lost", map[string]any{"partitions": parts})
		}),
	}
	if c.AutoCommit {
		interval := c.AutoCommitIntervalMs
		if interval == 0 {
			interval = 500
		}
		opts = append(opts, kgo.AutoCommitInterval(time.Duration(interval)*time.Millisecond))
	} else {
		opts = append(opts, kgo.DisableAutoCommit())
	}
	if c.GroupInstanceID != "" {
		opts = append(opts, kgo.InstanceID(c.GroupInstanceID))
	}
	client, err = kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	emit("started", map[string]any{"library": "franz-go", "version": franzVersion()})
	for {
		l.applyCommands()
		if l.closing {
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(l.pollMs)*time.Millisecond)
		fetches := client.PollRecords(ctx, 500)
		cancel()
		if fetches.IsClientClosed() {
			return errors.New("client closed")
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				fmt.Fprintf(os.Stderr, "fetch %s/%d: %v\n", topic, partition, err)
			}
		})
		records := [][2]int64{}
		fetches.EachRecord(func(r *kgo.Record) {
			records = append(records, [2]int64{int64(r.Partition), r.Offset})
		})
		if ms := l.batchMs(); ms > 0 {
			time.Sleep(time.Duration(ms) * time.Millisecond)
		}
		if len(records) > 0 {
			emit("processed", map[string]any{"records": records})
		}
		st.mu.Lock()
		for _, r := range records {
			if cur, ok := st.processed[int32(r[0])]; !ok || r[1]+1 > cur {
				st.processed[int32(r[0])] = r[1] + 1
			}
		}
		st.mu.Unlock()
		if mode := l.commitMode(); mode != "" {
			commit(client, c.Topic, st, mode)
		}
	}
	// Close leaves the group (a dynamic member) after the revoke callback
	client.Close()
	emit("closed", nil)
	return nil
}

func commit(client *kgo.Client, topic string, st *state, mode string) {
	offsets, shown := st.offsetsOf(topic, nil)
	if offsets == nil {
		return
	}
	if mode == "sync" {
		var failure error
		client.CommitOffsetsSync(context.Background(), offsets,
			func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
				failure = commitError(resp, err)
			})
		if failure != nil {
			emit("committed", map[string]any{"mode": mode, "error": failure.Error()})
			return
		}
	} else {
		client.CommitOffsets(context.Background(), offsets, nil)
	}
	emit("committed", map[string]any{"mode": mode, "offsets": shown})
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: franz-driver CONFIG_JSON")
		os.Exit(2)
	}
	var c config
	if err := json.Unmarshal([]byte(os.Args[1]), &c); err != nil {
		emit("error", map[string]any{"error": "config: " + err.Error()})
		os.Exit(1)
	}
	if err := run(c, newLoop(c)); err != nil {
		emit("error", map[string]any{"error": err.Error()})
		os.Exit(1)
	}
}
