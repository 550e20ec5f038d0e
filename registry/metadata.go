package registry

// UpdateMetadata merges md into the metadata of (app, id), overwriting
// existing keys and removing none, then re-registers the instance as
// Eureka does (a new lease, recorded as ADDED, a MetadataUpdated change); lastDirtyTimestamp is not
// changed. It returns ErrNotFound for an unknown or expired instance.
func (s *Store) UpdateMetadata(app, id string, md map[string]string) error {
	now := s.nowMillis()
	s.mu.Lock()
	l, err := s.visibleLocked(app, id, now)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	info := l.info.Clone()
	if info.Metadata == nil {
		info.Metadata = make(map[string]string, len(md))
	}
	for k, v := range md {
		info.Metadata[k] = v
	}
	s.registerLocked(info, MetadataUpdated, false, now)
	s.mu.Unlock()
	s.deliver()
	return nil
}
