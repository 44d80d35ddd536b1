package quorum

import (
	"context"
	"time"
)

func (m *Manager) newPermitAcquirer(name string, lc *lockConfig) (acquirer, error) {
	return nil, errNotImplemented
}
func (m *Manager) newSharedAcquirer(name string, lc *lockConfig) (acquirer, error) {
	return nil, errNotImplemented
}
func (m *Manager) newMultiAcquirer(lc *lockConfig) (acquirer, error) { return nil, errNotImplemented }
func (m *Manager) acquireMulti(ctx context.Context, names []string, ttl time.Duration, attempts int, opts []LockOption) (*Lock, error) {
	return nil, errNotImplemented
}
func (e *Election) campaign(ctx context.Context, value string, ttl time.Duration, opts []LockOption) (*Leadership, error) {
	return nil, errNotImplemented
}
func (e *Election) leader(ctx context.Context) (*LeaderInfo, error) { return nil, errNotImplemented }
func (e *Election) observe(ctx context.Context) <-chan Observation {
	ch := make(chan Observation)
	close(ch)
	return ch
}
func (l *Leadership) proclaim(ctx context.Context, value string) error { return errNotImplemented }
func (p *permitLock) extend(ctx context.Context, l *Lock, ttl time.Duration) (time.Time, *Report, error) {
	return time.Time{}, nil, errNotImplemented
}
func (p *permitLock) release(ctx context.Context, l *Lock) *Report { return &Report{} }
func (p *multiLock) extend(ctx context.Context, l *Lock, ttl time.Duration) (time.Time, *Report, error) {
	return time.Time{}, nil, errNotImplemented
}
func (p *multiLock) release(ctx context.Context, l *Lock) *Report { return &Report{} }
func (p *sharedLock) extend(ctx context.Context, l *Lock, ttl time.Duration) (time.Time, *Report, error) {
	return time.Time{}, nil, errNotImplemented
}
func (p *sharedLock) release(ctx context.Context, l *Lock) *Report { return &Report{} }
