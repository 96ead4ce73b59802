package brightbox

import brightbox "github.com/brightbox/gobrightbox/v2"

// APIClient returns the gobrightbox client Init built, for tests that set
// up the simulated cloud through the API (mapping a cloud IP).
func (p *Provider) APIClient() *brightbox.Client { return p.client }
