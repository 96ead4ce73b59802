package csidriver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// This file speaks the Docker volume plugin protocol to the host's
// storage driver plugins (docs.docker.com/engine/extend/plugins_volume),
// as the Docker daemon does (moby's pkg/plugins client and its volume
// driver proxy): a POST of JSON (nothing for Plugin.Activate) to
// /<Method> on the plugin's unix socket, <dir>/<driver>.sock, with
// Docker's Accept header and no Content-Type; an answer is JSON
// whose Err, when not "", is the plugin's error, and an answer other than
// 200 carries the error as {"Err": "..."}. Docker also finds plugins by
// .spec and .json files in /etc/docker/plugins and /usr/lib/docker/plugins
// (a TCP address): the driver knows only sockets, where rancher/storage's
// plugins listen.

// pluginMediaType is the version of the protocol Docker speaks.
const pluginMediaType = "application/vnd.docker.plugins.v1.2+json"

const (
	// pluginCallTimeout bounds one call: a plugin's Mount may mount a
	// network filesystem, but must not hang the node's publish.
	pluginCallTimeout = 2 * time.Minute
	// maxPluginAnswer bounds an answer's size.
	maxPluginAnswer = 1 << 20
)

// pluginClient calls the volume plugins whose sockets are in dir.
type pluginClient struct {
	dir string

	mu sync.Mutex
	// activated are the drivers whose plugin said it is a volume driver
	// (Plugin.Activate), which Docker asks once per plugin.
	activated map[string]bool
}

func newPluginClient(dir string) *pluginClient {
	return &pluginClient{dir: dir, activated: map[string]bool{}}
}

// socket is driver's plugin socket.
func (c *pluginClient) socket(driver string) string {
	return filepath.Join(c.dir, driver+".sock")
}

// pluginError is a plugin's answer that it failed: its Err.
type pluginError struct {
	driver, method, msg string
	status              int
}

func (e *pluginError) Error() string {
	return fmt.Sprintf("volume plugin %s: %s: %s", e.driver, e.method, e.msg)
}

// call calls method of driver's plugin with req and decodes its answer
// into resp (nil: none kept); the plugin's Err is a *pluginError.
func (c *pluginClient) call(ctx context.Context, driver, method string, req, resp any) error {
	ctx, cancel := context.WithTimeout(ctx, pluginCallTimeout)
	defer cancel()
	var body []byte
	if req != nil { // Docker sends no body for none (Plugin.Activate)
		var err error
		if body, err = json.Marshal(req); err != nil {
			return err
		}
	}
	sock := c.socket(driver)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://plugin/"+method, bytes.NewReader(body))
	if err != nil {
		return err
	}
	// Docker's only header: plugins are written for what it sends.
	hreq.Header.Set("Accept", pluginMediaType)
	var d net.Dialer
	hc := &http.Client{Transport: &http.Transport{
		Proxy:             nil,
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", sock)
		},
	}}
	hresp, err := hc.Do(hreq)
	if err != nil {
		return fmt.Errorf("volume plugin %s (%s): %s: %w", driver, sock, method, unwrapURLError(err))
	}
	defer func() { _ = hresp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, maxPluginAnswer+1))
	if err != nil {
		return fmt.Errorf("volume plugin %s: %s: reading the answer: %w", driver, method, err)
	}
	if len(data) > maxPluginAnswer {
		return fmt.Errorf("volume plugin %s: %s: an answer of more than %d bytes", driver, method, maxPluginAnswer)
	}
	var errBody struct{ Err string }
	if hresp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &errBody) == nil && errBody.Err != "" {
			msg = errBody.Err
		}
		return &pluginError{driver: driver, method: method, msg: truncateText(msg, 500), status: hresp.StatusCode}
	}
	if err := json.Unmarshal(data, &errBody); err != nil {
		return fmt.Errorf("volume plugin %s: %s: malformed answer: %w", driver, method, err)
	}
	if errBody.Err != "" {
		return &pluginError{driver: driver, method: method, msg: truncateText(errBody.Err, 500), status: hresp.StatusCode}
	}
	if resp != nil {
		if err := json.Unmarshal(data, resp); err != nil {
			return fmt.Errorf("volume plugin %s: %s: malformed answer: %w", driver, method, err)
		}
	}
	return nil
}

// unwrapURLError drops net/http's *url.Error, which repeats the request's
// made-up URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// activate has driver's plugin say it is a volume driver, once
// (Plugin.Activate: {"Implements": ["VolumeDriver"]}).
func (c *pluginClient) activate(ctx context.Context, driver string) error {
	c.mu.Lock()
	done := c.activated[driver]
	c.mu.Unlock()
	if done {
		return nil
	}
	var resp struct{ Implements []string }
	if err := c.call(ctx, driver, "Plugin.Activate", nil, &resp); err != nil {
		return err
	}
	if !slices.Contains(resp.Implements, "VolumeDriver") {
		return fmt.Errorf("volume plugin %s (%s) is not a volume driver: it implements %v", driver, c.socket(driver), resp.Implements)
	}
	c.mu.Lock()
	c.activated[driver] = true
	c.mu.Unlock()
	return nil
}

// pluginVolume is a volume as a plugin's Get answers it.
type pluginVolume struct {
	Name       string
	Mountpoint string
	Status     map[string]any `json:",omitempty"`
}

// get asks driver's plugin for volume name (VolumeDriver.Get): nil and
// the plugin's error when it has none, as the Docker daemon takes any
// error of Get.
func (c *pluginClient) get(ctx context.Context, driver, name string) (*pluginVolume, error) {
	var resp struct{ Volume *pluginVolume }
	if err := c.call(ctx, driver, "VolumeDriver.Get", map[string]string{"Name": name}, &resp); err != nil {
		return nil, err
	}
	if resp.Volume == nil {
		return nil, &pluginError{driver: driver, method: "VolumeDriver.Get", msg: "no volume " + name + " in its answer", status: http.StatusOK}
	}
	return resp.Volume, nil
}

// create has driver's plugin create volume name with opts
// (VolumeDriver.Create).
func (c *pluginClient) create(ctx context.Context, driver, name string, opts map[string]string) error {
	return c.call(ctx, driver, "VolumeDriver.Create", struct {
		Name string
		Opts map[string]string
	}{name, opts}, nil)
}

// mount has driver's plugin mount volume name for the caller id
// (VolumeDriver.Mount) and returns where it is mounted on the host.
func (c *pluginClient) mount(ctx context.Context, driver, name, id string) (string, error) {
	var resp struct{ Mountpoint string }
	if err := c.call(ctx, driver, "VolumeDriver.Mount", map[string]string{"Name": name, "ID": id}, &resp); err != nil {
		return "", err
	}
	if !filepath.IsAbs(resp.Mountpoint) {
		return "", fmt.Errorf("volume plugin %s: VolumeDriver.Mount of %s: malformed answer: mountpoint %q is not an absolute path",
			driver, name, truncateText(resp.Mountpoint, 200))
	}
	return resp.Mountpoint, nil
}

// unmount has driver's plugin release volume name for the caller id
// (VolumeDriver.Unmount).
func (c *pluginClient) unmount(ctx context.Context, driver, name, id string) error {
	return c.call(ctx, driver, "VolumeDriver.Unmount", map[string]string{"Name": name, "ID": id}, nil)
}
