package fakevendor

// SetOutage makes vendor's models list, the gateway's own health probe
// (a breaker's half-open trial), answer status: with the calls failed
// by [fake:status=N], a vendor down for everyone. Status 0 ends it.
func (s *Server) SetOutage(vendor string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outages == nil {
		s.outages = make(map[string]int)
	}
	if status == 0 {
		delete(s.outages, vendor)
		return
	}
	s.outages[vendor] = status
}

// outage is the status vendor's models list answers, 0 when it is up.
func (s *Server) outage(vendor string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.outages[vendor]
}
