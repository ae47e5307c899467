package app

import (
	"context"
	"fmt"
	"net"
	"os"

	gw "github.com/gwlabs/gateway"
)

// releaseEarlierIncarnations stamps this process's holds with a new
// incarnation of the instance (GATEWAY_INSTANCE_NAME, or the host name)
// and, before serving, releases the holds its earlier incarnations left
// (a kill, a crash) as records of requests cut by a crash, instead of
// waiting for their leases. Another instance's holds are untouched.
// Without a stable name nothing is released and the leases bound the
// holds.
func (m *Main) releaseEarlierIncarnations(ctx context.Context) error {
	st, ok := m.store.(gw.Incarnations)
	if !ok {
		return nil
	}
	name := instanceName(m.Config.InstanceName, m.Config.Addr)
	if name == "" {
		return nil // no stable name: the leases bound the holds
	}
	inc := gw.NewIncarnation(name)
	st.SetIncarnation(inc)
	n, err := st.ReleaseEarlierIncarnations(ctx, inc)
	if err != nil {
		return fmt.Errorf("release the holds of %s's earlier starts: %w", name, err)
	}
	if n > 0 {
		m.Logger.Info("released the holds of this instance's earlier starts", "instance", name, "holds", n)
	}
	return nil
}

// instanceName is the instance's stable name: the setting, or else the
// host name with the listening address (two live processes on one host
// cannot listen on the same one); "" when the address has no fixed port
// (":0"), which names a different socket at each start.
func instanceName(setting, addr string) string {
	if setting != "" {
		return setting
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		return ""
	}
	h, err := os.Hostname()
	if err != nil || h == "" {
		return ""
	}
	return h + "/" + addr
}
