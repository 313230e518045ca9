import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';

const SECTIONS = [
  { href: '/ui/', label: 'Dashboard' },
  { href: '/ui/submit', label: 'Submit' },
  { href: '/ui/tasks', label: 'Tasks' },
  { href: '/ui/search', label: 'Search' },
  { href: '/ui/compare', label: 'Compare' },
];

/** The frame of every page: the navigation bar and the page below it. */
export function Layout({ children }: { children: ComponentChildren }) {
  const { path } = useLocation();
  return (
    <>
      <header class="topbar">
        <a class="brand" href="/ui/">
          nestbox
        </a>
        <nav>
          {SECTIONS.map((section) => (
            <a key={section.href} href={section.href} class={path === section.href ? 'active' : undefined}>
              {section.label}
            </a>
          ))}
        </nav>
      </header>
      <main class="page">{children}</main>
    </>
  );
}
