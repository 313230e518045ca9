/** The page's sections as tabs; the open one is kept in the address's #fragment, so it can be linked to. */
import { useState } from 'preact/hooks';

export interface Tab {
  key: string;
  label: string;
}

export function useTab(tabs: Tab[]): [string, (key: string) => void] {
  const [chosen, setChosen] = useState(() => location.hash.slice(1));
  const open = tabs.some((tab) => tab.key === chosen) ? chosen : tabs[0]!.key;
  const choose = (key: string) => {
    history.replaceState(history.state, '', `#${key}`);
    setChosen(key);
  };
  return [open, choose];
}

export function TabBar({ tabs, open, onOpen }: { tabs: Tab[]; open: string; onOpen: (key: string) => void }) {
  return (
    <div class="tabs" role="tablist">
      {tabs.map((tab) => (
        <button key={tab.key} type="button" role="tab" data-tab={tab.key} aria-selected={tab.key === open} class={tab.key === open ? 'tab open' : 'tab'} onClick={() => onOpen(tab.key)}>
          {tab.label}
        </button>
      ))}
    </div>
  );
}
