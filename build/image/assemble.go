package image

import (
	"fmt"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Meta is what identifies a build: its version (also the tag), the source
// revision and the creation time every timestamp is set to.
type Meta struct {
	Version  string
	Revision string
	Created  time.Time
}

// assembleImage makes the image for platform p from the relay binary built
// for it: an empty base, one layer, OCI media types and Config.
func assembleImage(binary string, p v1.Platform, m Meta) (v1.Image, error) {
	layer, err := binaryLayer(binary, m.Created)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: m.Created.UTC().Truncate(time.Second)}
	cf := &v1.ConfigFile{
		Created:      created,
		OS:           p.OS,
		Architecture: p.Architecture,
		Config:       Config(m.Version, m.Revision),
		RootFS:       v1.RootFS{Type: "layers"},
	}
	img, err := mutate.ConfigFile(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), cf)
	if err != nil {
		return nil, fmt.Errorf("%s: setting the config: %w", platformKey(p), err)
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   created,
			CreatedBy: "build/cmd/image: " + BinaryPath + " (cmd/relay, CGO_ENABLED=0)",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: adding the layer: %w", platformKey(p), err)
	}
	return img, nil
}

// assembleIndex makes the multi-arch index of imgs, in order, each with
// its platform, annotated with the labels of m.
func assembleIndex(imgs []v1.Image, platforms []v1.Platform, m Meta) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for i, img := range imgs {
		p := platforms[i]
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &p},
		})
	}
	annotated, ok := mutate.Annotations(idx, Labels(m.Version, m.Revision)).(v1.ImageIndex)
	if !ok {
		return nil, fmt.Errorf("annotating the index: not an index")
	}
	return annotated, nil
}
