// Package brightbox is the Brightbox Cloud provider.
package brightbox

import (
	_ "github.com/brightbox/gobrightbox/v2"
	_ "github.com/brightbox/gobrightbox/v2/clientcredentials"
	_ "github.com/brightbox/gobrightbox/v2/passwordcredentials"
)
