package cloud

import (
	brightbox "github.com/brightbox/gobrightbox/v2"
	"github.com/brightbox/gobrightbox/v2/enums/serverstatus"
)

// ServerGone reports whether the API reports s as no longer existing, as
// the existing CCM decides: deleted or failed. Creating, active, inactive,
// deleting and unavailable servers exist. The CCM deletes a Node on it;
// the CSI driver answers an attach to such a server NotFound.
func ServerGone(s *brightbox.Server) bool {
	return s.Status == serverstatus.Deleted || s.Status == serverstatus.Failed
}
