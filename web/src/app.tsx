import { LocationProvider, Route, Router } from 'preact-iso';
import { Layout } from './components/layout';
import { SessionGate } from './components/session-gate';
import { AnalysisPage } from './pages/analysis';
import { ComparePage } from './pages/compare';
import { DashboardPage } from './pages/dashboard';
import { NotFoundPage } from './pages/not-found';
import { SearchPage } from './pages/search';
import { SubmitPage } from './pages/submit';
import { TasksPage } from './pages/tasks';

/** Every page of the interface, under /ui/. */
export function App() {
  return (
    <LocationProvider scope="/ui">
      <SessionGate>
        <Layout>
          <Router>
            <Route path="/ui/" component={DashboardPage} />
            <Route path="/ui/submit" component={SubmitPage} />
            <Route path="/ui/tasks" component={TasksPage} />
            <Route path="/ui/analysis/:id" component={AnalysisPage} />
            <Route path="/ui/search" component={SearchPage} />
            <Route path="/ui/compare" component={ComparePage} />
            <Route default component={NotFoundPage} />
          </Router>
        </Layout>
      </SessionGate>
    </LocationProvider>
  );
}
