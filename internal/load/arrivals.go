package load

import (
	"math"
	"math/rand/v2"
)

// arrivals are what the loop sends, as a Pacer is what vegeta's Attacker
// sends on: the open model's schedule, or the closed model's users, each of
// whom arrives again a think time after its last answer. Both are arrivals
// with an intended time, so one loop, one way of handling connections and
// one stopwatch serve both models. Times are ns since the engine's base.
type arrivals interface {
	// next is the earliest waiting arrival's slot; false when none waits.
	next() (int64, bool)
	// wake is the slot to wake at for the waiting arrivals: the earliest,
	// or a later one within window of it, so that one wake-up sends them
	// all, each at most window late.
	wake(window int64) int64
	// take removes the earliest arrival, to be sent at now on connection
	// conn; false when the load ended before it (a count or a time bound).
	take(now int64, conn int) (ticket, bool)
	// answered tells that t's request ended at done.
	answered(t ticket, done int64)
	// over is true once no arrival waits and none will come.
	over() bool
	// unsent counts the arrivals a load cut short never sent.
	unsent() int64
}

type ticket struct {
	seq      uint64
	intended int64  // unix ns
	user     uint32 // the closed model's user, the open model's connection
	lead     bool   // sent in the closed model's lead (Config.Lead): kept nowhere
}

// schedule is the open model's arrivals: the pacer's, read a little ahead
// so that a wake-up can serve the arrivals close behind the first.
type schedule struct {
	e     *Engine
	ahead []int64 // slots read from the pacer and not yet sent, from head on
	head  int
	ended bool // the pacer has no more
}

// maxBatch bounds how far wake reads ahead.
const maxBatch = 64

// fill reads ahead until n slots wait; false if the schedule has fewer.
func (s *schedule) fill(n int) bool {
	for len(s.ahead)-s.head < n && !s.ended {
		if s.head > 0 {
			s.ahead = s.ahead[:copy(s.ahead, s.ahead[s.head:])]
			s.head = 0
		}
		off, ok := s.e.cfg.Pacer.Next()
		if !ok {
			s.ended = true
			break
		}
		s.ahead = append(s.ahead, int64(off))
	}
	return len(s.ahead)-s.head >= n
}

func (s *schedule) next() (int64, bool) {
	if !s.fill(1) || (s.e.cfg.MaxRequests > 0 && s.e.seq.Load() >= s.e.cfg.MaxRequests) {
		return 0, false
	}
	return s.ahead[s.head], true
}

func (s *schedule) wake(window int64) int64 {
	first := s.ahead[s.head]
	last := first
	for k := 1; k < maxBatch && s.fill(k+1) && s.ahead[s.head+k] <= first+window; k++ {
		last = s.ahead[s.head+k]
	}
	return last
}

func (s *schedule) take(_ int64, conn int) (ticket, bool) {
	at := s.ahead[s.head]
	s.head++
	return ticket{seq: uint64(s.e.seq.Add(1) - 1), intended: s.e.baseUnix + at, user: uint32(conn)}, true
}

func (s *schedule) answered(ticket, int64) {}

func (s *schedule) over() bool {
	_, ok := s.next()
	return !ok
}

// unsent is counted, not walked: a schedule of 10¹² arrivals cut short
// must end the run at once.
func (s *schedule) unsent() int64 {
	n := int64(len(s.ahead)-s.head) + s.e.cfg.Pacer.Remaining()
	if s.e.cfg.MaxRequests > 0 {
		n = min(n, s.e.cfg.MaxRequests-s.e.seq.Load())
	}
	return n
}

// users are the closed model's arrivals: every user arrives at the start,
// then a think time after each answer, until its iterations, the shared
// count or the time bound end it. A user waiting for a connection keeps
// its slot, so that wait counts in the corrected latency as queueing
// does in the open model.
type users struct {
	e        *Engine
	due      []due  // waiting users, a min-heap on at
	sent     []int  // requests per user
	active   int    // users waiting or in flight
	lead     int64  // a user's arrival before it is the lead's
	leadSent uint64 // the lead's requests so far, numbered apart from the measured load's
	deadline int64  // no request starts at or after it
	rng      *rand.Rand
}

type due struct {
	at   int64
	user uint32
}

func newUsers(e *Engine) *users {
	n := e.closedUsers()
	u := &users{e: e, due: make([]due, n), sent: make([]int, n), active: n, lead: int64(e.cfg.Lead), deadline: math.MaxInt64, rng: rand.New(rand.NewPCG(uint64(n), 0x6d736265))}
	for i := range u.due {
		u.due[i].user = uint32(i)
	}
	if e.cfg.Duration > 0 {
		u.deadline = u.lead + int64(e.cfg.Duration)
	}
	return u
}

func (u *users) next() (int64, bool) {
	if len(u.due) == 0 {
		return 0, false
	}
	return u.due[0].at, true
}

// wake does not look behind the first user: think times are drawn per
// user, rarely dense enough for a shared wake-up to pay.
func (u *users) wake(int64) int64 { return u.due[0].at }

func (u *users) take(now int64, _ int) (ticket, bool) {
	d := u.pop()
	if now >= u.deadline {
		u.active--
		return ticket{}, false
	}
	if d.at < u.lead {
		// Numbered apart: the measured load's numbers start at 0, and
		// the count it may send is all its own.
		u.leadSent++
		return ticket{seq: u.leadSent - 1, intended: u.e.baseUnix + d.at, user: d.user, lead: true}, true
	}
	seq, ok := u.e.claim()
	if !ok {
		u.active--
		return ticket{}, false
	}
	u.sent[d.user]++
	return ticket{seq: seq, intended: u.e.baseUnix + d.at, user: d.user}, true
}

func (u *users) answered(t ticket, done int64) {
	if it := u.e.cfg.Iterations; it > 0 && u.sent[t.user] >= it {
		u.active--
		return
	}
	at := done + int64(u.e.cfg.Think.draw(u.rng))
	if at >= u.deadline {
		// A user stops rather than think past the time bound.
		u.active--
		return
	}
	u.push(due{at: at, user: t.user})
}

func (u *users) over() bool { return u.active == 0 }

func (u *users) unsent() int64 { return 0 }

func (u *users) push(d due) {
	h := append(u.due, d)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].at <= h[i].at {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	u.due = h
}

func (u *users) pop() due {
	h := u.due
	top, n := h[0], len(h)-1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].at < h[c].at {
			c++
		}
		if h[i].at <= h[c].at {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	u.due = h
	return top
}
