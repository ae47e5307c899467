package main

import (
	"bufio"
	"fmt"
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
// too) and the number of commands Redis processed (its INFO counter, one
// a round trip for the gateway's scripts).
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
	cmds int64                 // Redis's total_commands_processed; -1: unknown
	own  int64                 // commands the reading itself sent
}

func (s *services) snap() serviceSnap {
	r := serviceSnap{cpu: map[int]time.Duration{}, cmds: -1, own: 1}
	if len(s.auth) > 0 {
		r.own = 2
	}
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
// Redis commands processed, -1 when unknown. The later reading's own
// commands are left out.
func (b serviceSnap) since(a serviceSnap) (time.Duration, int64) {
	var cpu time.Duration
	for pid, c := range b.cpu {
		cpu += c - a.cpu[pid]
	}
	cmds := int64(-1)
	if a.cmds >= 0 && b.cmds >= 0 {
		cmds = max(b.cmds-a.cmds-b.own, 0)
	}
	return cpu, cmds
}

// commands reads Redis's total_commands_processed over RESP.
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
	if err := send("INFO", "stats"); err != nil {
		return 0, err
	}
	line, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "$") {
		return 0, fmt.Errorf("redis info: %q %v", line, err)
	}
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return 0, err
		}
		if v, ok := strings.CutPrefix(line, "total_commands_processed:"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
}
