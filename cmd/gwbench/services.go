package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// services measures what a PostgreSQL target costs its servers: the CPU
// time of every PostgreSQL and Redis server process on the machine
// (found by name in /proc, so other clients of the same servers count
// too) and the number of scripts Redis ran (its INFO commandstats calls
// of EVAL and EVALSHA: the gateway's limiter calls Redis only through
// scripts, one a round trip unless pipelined).
type services struct {
	redis string // host:port, or empty
	auth  []string
	db    int
}

// serviceNames are the process names (/proc/PID/comm) counted as the
// store's servers.
var serviceNames = map[string]bool{"postgres": true, "redis-server": true}

func newServices(redisURL string) *services {
	s := &services{}
	u, err := url.Parse(redisURL)
	if err != nil || u.Host == "" {
		return s
	}
	s.redis = u.Host
	if !strings.Contains(u.Host, ":") {
		s.redis += ":6379"
	}
	if pw, ok := u.User.Password(); ok {
		s.auth = []string{"AUTH", pw}
		if name := u.User.Username(); name != "" {
			s.auth = []string{"AUTH", name, pw}
		}
	}
	return s
}

// serviceSnap is one reading.
type serviceSnap struct {
	cpu  map[int]time.Duration // per server process
	cmds int64                 // Redis's script calls; -1: unknown
}

func (s *services) snap() serviceSnap {
	r := serviceSnap{cpu: map[int]time.Duration{}, cmds: -1}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil || !serviceNames[strings.TrimSpace(string(comm))] {
			continue
		}
		if c, err := procCPU(pid); err == nil {
			r.cpu[pid] = c
		}
	}
	if s.redis != "" {
		if n, err := s.commands(); err == nil {
			r.cmds = n
		}
	}
	return r
}

// since returns the servers' CPU time between two readings (a process
// started meanwhile counts from zero; one that ended is lost) and the
// Redis script calls, -1 when unknown.
func (b serviceSnap) since(a serviceSnap) (time.Duration, int64) {
	var cpu time.Duration
	for pid, c := range b.cpu {
		cpu += c - a.cpu[pid]
	}
	cmds := int64(-1)
	if a.cmds >= 0 && b.cmds >= 0 {
		cmds = max(b.cmds-a.cmds, 0)
	}
	return cpu, cmds
}

// commands reads Redis's count of EVAL and EVALSHA calls over RESP.
func (s *services) commands() (int64, error) {
	c, err := net.DialTimeout("tcp", s.redis, time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	send := func(args ...string) error {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		_, err := c.Write([]byte(b.String()))
		return err
	}
	rd := bufio.NewReader(c)
	if len(s.auth) > 0 {
		if err := send(s.auth...); err != nil {
			return 0, err
		}
		if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+") {
			return 0, fmt.Errorf("redis auth: %q %v", line, err)
		}
	}
	if err := send("INFO", "commandstats"); err != nil {
		return 0, err
	}
	line, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "$") {
		return 0, fmt.Errorf("redis info: %q %v", line, err)
	}
	size, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil || size < 0 || size > 1<<20 {
		return 0, fmt.Errorf("redis info: bad length %q", line)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(rd, body); err != nil {
		return 0, err
	}
	var n int64
	for _, l := range strings.Split(string(body), "\n") {
		// cmdstat_evalsha:calls=77100,usec=...
		name, rest, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok || name != "cmdstat_eval" && name != "cmdstat_evalsha" && name != "cmdstat_eval_ro" && name != "cmdstat_evalsha_ro" {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		v, err := strconv.ParseInt(calls, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("redis info: %q", l)
		}
		n += v
	}
	return n, nil
}
