import { useState } from 'preact/hooks';

/** Files by drag and drop or the picker (several at once); the picker is the keyboard's way in. */
export function FileDrop({ onFiles }: { onFiles: (files: File[]) => void }) {
  const [over, setOver] = useState(false);
  return (
    <label
      class={over ? 'drop-zone over' : 'drop-zone'}
      onDragOver={(event) => {
        event.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(event) => {
        event.preventDefault();
        setOver(false);
        onFiles([...(event.dataTransfer?.files ?? [])]);
      }}
    >
      <span>Drop files here, or choose them</span>
      <input
        type="file"
        name="files"
        multiple
        onChange={(event) => {
          onFiles([...(event.currentTarget.files ?? [])]);
          event.currentTarget.value = '';
        }}
      />
    </label>
  );
}
