package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// The PostgreSQL and Redis suites run when GATEWAY_TEST_POSTGRES_URL and
// GATEWAY_TEST_REDIS_URL name a server. When a variable is unset, testall
// looks for the service on its default local port and, when it answers
// and lets the default user in without a password, sets the variable for
// the tests (and says so).
const (
	postgresEnv  = "GATEWAY_TEST_POSTGRES_URL"
	redisEnv     = "GATEWAY_TEST_REDIS_URL"
	postgresAddr = "127.0.0.1:5432"
	redisAddr    = "127.0.0.1:6379"
	probeTimeout = 500 * time.Millisecond
)

// localServices returns the environment additions ("NAME=value") for the
// services found, and one line per service saying what was found and
// used. getenv reads the caller's environment.
func localServices(getenv func(string) string, pgAddr, redAddr string) (env, notes []string) {
	if u := getenv(postgresEnv); u != "" {
		notes = append(notes, fmt.Sprintf("PostgreSQL: %s is set, using it", postgresEnv))
	} else if db, err := probePostgres(pgAddr, "postgres", []string{"test", "postgres"}); err != nil {
		notes = append(notes, fmt.Sprintf("PostgreSQL: none usable on %s (%v) and %s is unset: its suites will skip", pgAddr, err, postgresEnv))
	} else {
		u := "postgres://postgres@" + pgAddr + "/" + db + "?sslmode=disable"
		env = append(env, postgresEnv+"="+u)
		notes = append(notes, fmt.Sprintf("PostgreSQL: found on %s, using %s=%s", pgAddr, postgresEnv, u))
	}
	if u := getenv(redisEnv); u != "" {
		notes = append(notes, fmt.Sprintf("Redis: %s is set, using it", redisEnv))
	} else if err := probeRedis(redAddr); err != nil {
		notes = append(notes, fmt.Sprintf("Redis: none usable on %s (%v) and %s is unset: its suites will skip", redAddr, err, redisEnv))
	} else {
		u := "redis://" + redAddr + "/0"
		env = append(env, redisEnv+"="+u)
		notes = append(notes, fmt.Sprintf("Redis: found on %s, using %s=%s", redAddr, redisEnv, u))
	}
	return env, notes
}

// probePostgres opens a session as user on the first of dbs that lets it
// in without a password (a local server's usual trust authentication) and
// returns that database's name.
func probePostgres(addr, user string, dbs []string) (string, error) {
	var last error
	for _, db := range dbs {
		if last = pgStartup(addr, user, db); last == nil {
			return db, nil
		}
		var ne net.Error
		if errors.As(last, &ne) || errors.Is(last, errNoServer) {
			break // no server there: the next database will not do better
		}
	}
	return "", last
}

var errNoServer = errors.New("no server")

// pgStartup sends PostgreSQL's startup message (protocol 3.0, no TLS) and
// reads the first answer: AuthenticationOk lets the tests in; a password
// request or an error (an unknown database) does not.
func pgStartup(addr, user, db string) error {
	c, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err != nil {
		return errNoServerf(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(probeTimeout))
	params := "user\x00" + user + "\x00database\x00" + db + "\x00\x00"
	msg := make([]byte, 8, 8+len(params))
	binary.BigEndian.PutUint32(msg[0:4], uint32(8+len(params)))
	binary.BigEndian.PutUint32(msg[4:8], 3<<16) // protocol 3.0
	msg = append(msg, params...)
	if _, err := c.Write(msg); err != nil {
		return err
	}
	r := bufio.NewReader(c)
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return fmt.Errorf("not a PostgreSQL answer: %w", err)
	}
	n := int(binary.BigEndian.Uint32(hdr[1:5])) - 4
	if n < 0 || n > 1<<16 {
		return errors.New("not a PostgreSQL answer")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return fmt.Errorf("not a PostgreSQL answer: %w", err)
	}
	switch hdr[0] {
	case 'R':
		if len(body) >= 4 && binary.BigEndian.Uint32(body) == 0 {
			_, _ = c.Write([]byte{'X', 0, 0, 0, 4}) // Terminate
			return nil
		}
		return fmt.Errorf("user %s needs a password", user)
	case 'E':
		return fmt.Errorf("database %s: %s", db, pgErrorMessage(body))
	}
	return errors.New("not a PostgreSQL answer")
}

// pgErrorMessage picks the M (message) field out of an ErrorResponse.
func pgErrorMessage(body []byte) string {
	for _, f := range strings.Split(string(body), "\x00") {
		if strings.HasPrefix(f, "M") {
			return f[1:]
		}
	}
	return "refused"
}

// probeRedis sends PING and wants +PONG (a server that needs a password
// answers -NOAUTH).
func probeRedis(addr string) error {
	c, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err != nil {
		return errNoServerf(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(probeTimeout))
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("not a Redis answer: %w", err)
	}
	if line = strings.TrimSpace(line); line != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

func errNoServerf(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	return fmt.Errorf("%w: %v", errNoServer, err)
}
