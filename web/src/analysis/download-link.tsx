/** A download served as a zip archive whose password is `infected`, so no browser or antivirus handles the file in the clear. */
export function DownloadLink({ href, label }: { href: string | null; label: string }) {
  if (href === null) return null;
  return (
    <a class="download" href={href} download>
      {label} <span class="muted">(zip, password infected)</span>
    </a>
  );
}
